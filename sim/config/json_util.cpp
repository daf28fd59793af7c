#include "sim/config/json_util.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace sim::config {

namespace {

std::string show(const nlohmann::json* got) {
  if (got == nullptr) return "nothing (the field is missing)";
  std::string s = got->dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string fmt_num(double x) {
  return fmt::format("{:g}", x);
}

}  // namespace

JsonReader::JsonReader(const nlohmann::json& obj, std::string file, std::string path)
    : obj_(obj), file_(std::move(file)), path_(std::move(path)) {}

const nlohmann::json* JsonReader::find(const char* key) {
  known_.insert(key);
  if (!obj_.is_object()) return nullptr;
  auto it = obj_.find(key);
  return it == obj_.end() ? nullptr : &*it;
}

const nlohmann::json* JsonReader::raw(const char* key) {
  return find(key);
}

void JsonReader::fail(const char* key, const std::string& expected, const nlohmann::json* got) {
  if (error_) return;
  error_ = fmt::format("{}: {}: expected {}, got {}", file_, path_of(key), expected, show(got));
}

void JsonReader::fail_message(const std::string& message) {
  if (!error_) error_ = message;
}

double JsonReader::number(const char* key, std::optional<double> def, double lo, double hi,
                          bool lo_inclusive) {
  const nlohmann::json* v = find(key);
  std::string expected =
      lo_inclusive ? fmt::format("a number >= {}", fmt_num(lo)) : fmt::format("a number > {}", fmt_num(lo));
  if (hi < kMaxNumber) expected += fmt::format(" and <= {}", fmt_num(hi));
  if (v == nullptr) {
    if (!def) fail(key, expected, nullptr);
    return def.value_or(lo);
  }
  if (!v->is_number()) {
    fail(key, expected, v);
    return def.value_or(lo);
  }
  double x = v->get<double>();
  bool below = lo_inclusive ? x < lo : x <= lo;
  if (!std::isfinite(x) || below || x > hi || std::fabs(x) > kMaxNumber) {
    if (std::fabs(x) > kMaxNumber && std::isfinite(x)) expected += fmt::format(" (at most {:g})", kMaxNumber);
    fail(key, expected, v);
    return def.value_or(lo);
  }
  return x;
}

int64_t JsonReader::integer(const char* key, std::optional<int64_t> def, int64_t lo, int64_t hi) {
  const nlohmann::json* v = find(key);
  std::string expected =
      hi == INT64_MAX ? fmt::format("an integer >= {}", lo) : fmt::format("an integer in [{}, {}]", lo, hi);
  if (v == nullptr) {
    if (!def) fail(key, expected, nullptr);
    return def.value_or(lo);
  }
  int64_t x = 0;
  if (v->is_number_integer()) {
    x = v->get<int64_t>();
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) && std::fabs(v->get<double>()) < 9e15 &&
             v->get<double>() == std::floor(v->get<double>())) {
    x = static_cast<int64_t>(v->get<double>());  // 1e3 is accepted as 1000
  } else {
    fail(key, expected, v);
    return def.value_or(lo);
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    fail(key, expected, v);
    return def.value_or(lo);
  }
  if (x < lo || x > hi) {
    fail(key, expected, v);
    return def.value_or(lo);
  }
  return x;
}

bool JsonReader::boolean(const char* key, std::optional<bool> def) {
  const nlohmann::json* v = find(key);
  if (v == nullptr || !v->is_boolean()) {
    if (v != nullptr || !def) fail(key, "true or false", v);
    return def.value_or(false);
  }
  return v->get<bool>();
}

std::string JsonReader::string(const char* key, std::optional<std::string> def) {
  const nlohmann::json* v = find(key);
  if (v == nullptr || !v->is_string()) {
    if (v != nullptr || !def) fail(key, "a string", v);
    return def.value_or("");
  }
  return v->get<std::string>();
}

std::string JsonReader::one_of(const char* key, std::optional<std::string> def,
                               const std::vector<std::string>& allowed) {
  std::string names;
  for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
  const nlohmann::json* v = find(key);
  std::string expected = "one of " + names;
  if (v == nullptr) {
    if (!def) fail(key, expected, nullptr);
    return def.value_or("");
  }
  if (!v->is_string()) {
    fail(key, expected, v);
    return def.value_or("");
  }
  std::string s = v->get<std::string>();
  for (const auto& a : allowed)
    if (a == s) return s;
  fail(key, expected, v);
  return def.value_or("");
}

void JsonReader::object(const char* key, const std::function<void(JsonReader&)>& fn, bool required) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json* v = find(key);
  if (v == nullptr && required) {
    fail(key, "an object", nullptr);
    return;
  }
  if (v != nullptr && !v->is_object()) {
    fail(key, "an object", v);
    return;
  }
  JsonReader child(v ? *v : kEmpty, file_, path_of(key));
  fn(child);
  Status s = child.finish();
  if (!s && !error_) error_ = s.message();
}

Status JsonReader::finish() {
  if (!error_ && obj_.is_object()) {
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      if (known_.count(it.key()) == 0) {
        std::string names;
        for (const auto& k : known_) names += (names.empty() ? "" : ", ") + k;
        error_ =
            fmt::format("{}: {}: unknown key (expected one of: {})", file_, path_of(it.key().c_str()), names);
        break;
      }
    }
  }
  return error_ ? Status::error(*error_) : Status::ok();
}

void read_notes(JsonReader& r) {
  if (const nlohmann::json* notes = r.raw("notes")) {
    bool ok = notes->is_string();
    if (notes->is_array()) {
      ok = true;
      for (const auto& line : *notes) ok = ok && line.is_string();
    }
    if (!ok) r.fail("notes", "a string or an array of strings", notes);
  }
}

StatusOr<nlohmann::json> read_json_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Status::error(fmt::format("{}: cannot open: no such file", path));
  if (S_ISDIR(st.st_mode))
    return Status::error(fmt::format("{}: expected a JSON file, got a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(fmt::format("{}: cannot open: permission denied or unreadable", path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Turn the byte offset into line:column.
    size_t line = 1, col = 1;
    for (size_t i = 0; i < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    auto pos = what.find("syntax error");
    return Status::error(fmt::format("{}:{}:{}: malformed JSON: {}", path, line, col,
                                     pos == std::string::npos ? what : what.substr(pos)));
  }
  if (!j.is_object()) return Status::error(fmt::format("{}: expected a JSON object at the top level", path));
  return j;
}

Status apply_override(nlohmann::json& root, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    return Status::error(fmt::format("--set {}: expected key.path=value", assignment));
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error&) {
    value = text;
  }
  nlohmann::json* node = &root;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) return Status::error(fmt::format("--set {}: empty component in key path", assignment));
    if (!node->is_object())
      return Status::error(
          fmt::format("--set {}: {} is not an object", assignment, key.substr(0, start - 1)));
    if (dot == std::string::npos) {
      (*node)[part] = value;
      return Status::ok();
    }
    node = &(*node)[part];
    if (node->is_null()) *node = nlohmann::json::object();
    start = dot + 1;
  }
}

}  // namespace sim::config
