#include "sim/config/json_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

namespace sim::config {

std::string show_value(const nlohmann::json& v) {
  // Strings from --set are not checked for UTF-8: replace bad bytes rather than throw.
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

namespace {

std::string show(const nlohmann::json* got) {
  return got == nullptr ? "nothing (the field is missing)" : show_value(*got);
}

std::string fmt_num(double x) {
  return fmt::format("{:g}", x);
}

// "file:line:column: malformed JSON: syntax error ..." from a parse error's byte offset; other parser
// errors (a number beyond the range of a double) carry no offset: "file: malformed JSON: ...".
std::string syntax_error_message(const std::string& text, const std::string& name,
                                 const nlohmann::json::exception& e) {
  std::string what = e.what();
  auto pos = what.find("] ");  // drop "[json.exception.parse_error.101] "
  if (pos != std::string::npos) what = what.substr(pos + 2);
  pos = what.find("syntax error");
  if (pos != std::string::npos) what = what.substr(pos);
  const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&e);
  if (pe == nullptr) return fmt::format("{}: malformed JSON: {}", name, what);
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pe->byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}:{}: malformed JSON: {}", name, line, col, what);
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

std::string JsonReader::string(const char* key, const std::optional<std::string>& def) {
  const nlohmann::json* v = find(key);
  if (v == nullptr || !v->is_string()) {
    if (v != nullptr || !def) fail(key, "a string", v);
    return def.value_or("");
  }
  return v->get<std::string>();
}

std::string JsonReader::one_of(const char* key, const std::optional<std::string>& def,
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

const nlohmann::json* at_path(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = &root;
  size_t start = 0;
  while (true) {
    size_t dot = dotted.find('.', start);
    std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

namespace {

// The dotted path of the first value of `root` outside its documentation (an example for messages).
std::string first_value_path(const nlohmann::json& root, const std::string& prefix = "") {
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (prefix.empty() && (it.key() == "name" || it.key() == "notes" || it.key() == "sources")) continue;
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (!it.value().is_object()) return path;
    if (std::string inner = first_value_path(it.value(), path); !inner.empty()) return inner;
  }
  return "";
}

}  // namespace

void read_sources(JsonReader& r, const nlohmann::json& root, std::map<std::string, std::string>& out) {
  const nlohmann::json* sources = r.raw("sources");
  if (sources == nullptr) return;
  if (!sources->is_object()) {
    r.fail("sources", "an object (field path -> where its value comes from)", sources);
    return;
  }
  for (auto it = sources->begin(); it != sources->end(); ++it) {
    const nlohmann::json* field = at_path(root, it.key());
    if (field == nullptr || field->is_object() || it.key().rfind("sources", 0) == 0) {
      r.fail_message(fmt::format("{}: sources.{}: expected the path of a field of this file (e.g. {})",
                                 r.file(), it.key(), first_value_path(root)));
      return;
    }
    if (!it.value().is_string() || it.value().get<std::string>().empty()) {
      r.fail_message(fmt::format("{}: sources.{}: expected a non-empty string, got {}", r.file(), it.key(),
                                 it.value().dump()));
      return;
    }
    out[it.key()] = it.value().get<std::string>();
  }
}

std::vector<double> read_numbers(JsonReader& r, const char* key, double lo, double hi, const char* what) {
  std::vector<double> out;
  const nlohmann::json* a = r.raw(key);
  if (a == nullptr) return out;
  const std::string expected = fmt::format("an array of {}", what);
  if (!a->is_array()) {
    r.fail(key, expected, a);
    return out;
  }
  for (const auto& v : *a) {
    if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi) {
      r.fail(key, expected, &v);
      return out;
    }
    out.push_back(v.get<double>());
  }
  return out;
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

StatusOr<std::string> read_text_file(const std::string& path, const std::string& kind, size_t max_bytes) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return Status::error(err == ENOENT ? fmt::format("{}: cannot open: no such file", path)
                                       : fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) return Status::error(fmt::format("{}: expected {}, got a directory", path, kind));
  // A FIFO, a socket or a device would block or never end: only a regular file is read.
  if (!S_ISREG(st.st_mode))
    return Status::error(fmt::format("{}: expected {}, got {} (not a regular file)", path, kind,
                                     S_ISFIFO(st.st_mode)                         ? "a FIFO"
                                     : S_ISSOCK(st.st_mode)                       ? "a socket"
                                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                                  : "a special file"));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(fmt::format("{}: cannot open: permission denied or unreadable", path));
  std::string text;
  if (S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) <= max_bytes)
    text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::error(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return Status::error(fmt::format("{}: larger than {} bytes, expected {} (is it the right file?)", path,
                                       max_bytes, kind));
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

StatusOr<nlohmann::json> parse_json_object(const std::string& text, const std::string& name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
    return Status::error(syntax_error_message(text, name, e));
  }
  if (!j.is_object()) return Status::error(fmt::format("{}: expected a JSON object at the top level", name));
  return j;
}

StatusOr<nlohmann::json> read_json_file(const std::string& path) {
  StatusOr<std::string> text = read_text_file(path, "a JSON file", kMaxJsonFileBytes);
  if (!text) return text.status();
  return parse_json_object(*text, path);
}

Status apply_override(nlohmann::json& root, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    return Status::error(fmt::format("--set {}: expected key.path=value", assignment));
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;  // not JSON (or a number beyond double): a plain string
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

namespace {

// The JSON path an error message from this loader is about ("file: path: ..."), or "".
bool path_related(const std::string& a, const std::string& b) {
  auto under = [](const std::string& x, const std::string& y) {
    return x.size() > y.size() && x.compare(0, y.size(), y) == 0 && x[y.size()] == '.';
  };
  return a == b || under(a, b) || under(b, a);
}

}  // namespace

std::string error_path(const std::string& message, const std::string& file) {
  std::string prefix = file + ": ";
  if (message.compare(0, prefix.size(), prefix) != 0) return "";
  size_t end = message.find(": ", prefix.size());
  return end == std::string::npos ? "" : message.substr(prefix.size(), end - prefix.size());
}

Status attribute_to_override(Status s, const std::string& file, const std::vector<std::string>& overrides) {
  if (s) return s;
  std::string path = error_path(s.message(), file);
  if (path.empty()) return s;
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    std::string key = it->substr(0, it->find('='));
    if (path_related(path, key)) {
      return Status::error(fmt::format("{}: --set {}: {}", file, *it, s.message().substr(file.size() + 2)));
    }
  }
  return s;
}

}  // namespace sim::config
