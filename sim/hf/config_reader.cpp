#include "sim/hf/config_reader.h"

#include <fmt/format.h>

#include <cmath>

#include "sim/config/json_util.h"

namespace sim::hf {

const nlohmann::json* ConfigReader::find(const char* key) const {
  if (!doc_.is_object()) return nullptr;
  auto it = doc_.find(key);
  if (it == doc_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool ConfigReader::has(const char* key) const {
  return find(key) != nullptr;
}

void ConfigReader::fail(const std::string& key, const std::string& expected, const nlohmann::json* got) {
  if (error_) return;
  error_ =
      fmt::format("{}: {}: expected {}, got {}", file_, key, expected,
                  got == nullptr ? std::string("nothing (the key is missing)") : config::show_value(*got));
}

namespace {

// An integer value of JSON (an integral number; 64.0 is accepted as 64).
std::optional<int64_t> as_integer(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

}  // namespace

int64_t ConfigReader::integer_or(const char* key, int64_t def, int64_t lo, int64_t hi) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return def;
  std::optional<int64_t> i = as_integer(*v);
  if (!i || *i < lo || *i > hi) {
    fail(key, fmt::format("an integer in [{}, {}]", lo, hi), v);
    return def;
  }
  return *i;
}

int64_t ConfigReader::integer(const char* key, int64_t lo, int64_t hi) {
  if (find(key) == nullptr) {
    fail(key, fmt::format("an integer in [{}, {}]", lo, hi), nullptr);
    return lo;
  }
  return integer_or(key, lo, lo, hi);
}

bool ConfigReader::boolean_or(const char* key, bool def) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return def;
  if (!v->is_boolean()) {
    fail(key, "true or false", v);
    return def;
  }
  return v->get<bool>();
}

std::optional<std::string> ConfigReader::optional_string(const char* key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    fail(key, "a string", v);
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::string ConfigReader::string(const char* key) {
  if (find(key) == nullptr) {
    fail(key, "a string", nullptr);
    return "";
  }
  return optional_string(key).value_or("");
}

std::vector<std::string> ConfigReader::strings(const char* key) {
  std::vector<std::string> out;
  const nlohmann::json* v = find(key);
  if (v == nullptr) return out;
  if (!v->is_array()) {
    fail(key, "an array of strings", v);
    return out;
  }
  for (const auto& e : *v) {
    if (!e.is_string()) {
      fail(key, "an array of strings", v);
      return {};
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::vector<int64_t> ConfigReader::integers(const char* key, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  const nlohmann::json* v = find(key);
  if (v == nullptr) return out;
  const std::string expected = fmt::format("an array of integers in [{}, {}]", lo, hi);
  if (!v->is_array()) {
    fail(key, expected, v);
    return out;
  }
  for (const auto& e : *v) {
    std::optional<int64_t> i = as_integer(e);
    if (!i || *i < lo || *i > hi) {
      fail(key, expected, v);
      return {};
    }
    out.push_back(*i);
  }
  return out;
}

const nlohmann::json* ConfigReader::object(const char* key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) {
    fail(key, "an object", v);
    return nullptr;
  }
  return v;
}

}  // namespace sim::hf
