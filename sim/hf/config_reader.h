// ConfigReader: reads the keys of a Hugging Face config.json that the importer needs. Unlike the model
// files' JsonReader it ignores keys it is not asked for (a config holds many: tokenizer ids, training
// options); a key it is asked for must be there with the expected type and range. The first error wins and
// reads like
//   path/config.json: num_key_value_heads: expected an integer in [1, 100000], got "eight"
// "null" counts as absent (configs write `"q_lora_rank": null`).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::hf {

class ConfigReader {
 public:
  // `doc` must outlive the reader; `file` names it in messages.
  ConfigReader(const nlohmann::json& doc, std::string file) : doc_(doc), file_(std::move(file)) {}

  // Required keys: an error when missing (or null).
  int64_t integer(const char* key, int64_t lo, int64_t hi);
  std::string string(const char* key);
  // Optional keys: `def` when missing or null.
  int64_t integer_or(const char* key, int64_t def, int64_t lo, int64_t hi);
  bool boolean_or(const char* key, bool def);
  std::optional<std::string> optional_string(const char* key);
  // Arrays: empty when missing or null.
  std::vector<std::string> strings(const char* key);
  std::vector<int64_t> integers(const char* key, int64_t lo, int64_t hi);
  // A sub-object, or nullptr when missing or null; an error when it is another type.
  const nlohmann::json* object(const char* key);
  bool has(const char* key) const;

  // Records an error at `key` unless one is already recorded. `got` nullptr = the key is missing.
  void fail(const std::string& key, const std::string& expected, const nlohmann::json* got);
  bool ok() const { return !error_.has_value(); }
  Status status() const { return ok() ? Status::ok() : Status::error(*error_); }
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json* find(const char* key) const;

  const nlohmann::json& doc_;
  std::string file_;
  std::optional<std::string> error_;
};

}  // namespace sim::hf
