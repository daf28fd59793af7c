// JsonReader: strict, path-aware reading of one JSON object. Every getter marks its key as known;
// finish() reports unknown keys. The first error wins and reads like
//   scenarios/x.json: cluster.prefill_nodes: expected an integer >= 1, got -2
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::config {

// Largest magnitude accepted for any number (bytes, bandwidths, FLOP/s): larger is an input error.
inline constexpr double kMaxNumber = 1e20;

class JsonReader {
 public:
  // `obj` must outlive the reader. `path` is the JSON path of `obj` ("" for the root).
  JsonReader(const nlohmann::json& obj, std::string file, std::string path);

  // A missing key returns `def`; std::nullopt as def makes the key required.
  double number(const char* key, std::optional<double> def, double lo, double hi = kMaxNumber,
                bool lo_inclusive = true);
  double positive(const char* key, std::optional<double> def) {
    return number(key, def, 0, kMaxNumber, false);
  }
  double non_negative(const char* key, std::optional<double> def) { return number(key, def, 0); }
  // 0 < x <= 1.
  double fraction(const char* key, std::optional<double> def) { return number(key, def, 0, 1, false); }
  int64_t integer(const char* key, std::optional<int64_t> def, int64_t lo, int64_t hi = INT64_MAX);
  bool boolean(const char* key, std::optional<bool> def);
  std::string string(const char* key, const std::optional<std::string>& def);
  // A string that must be one of `allowed`; the error lists them.
  std::string one_of(const char* key, const std::optional<std::string>& def,
                     const std::vector<std::string>& allowed);
  // Runs `fn` on the sub-object `key` (an empty object when missing and not required), then checks its keys.
  void object(const char* key, const std::function<void(JsonReader&)>& fn, bool required = false);
  // Marks `key` as known and returns it (nullptr when missing), for free-form values such as notes.
  const nlohmann::json* raw(const char* key);

  // Records an error at `key` unless one is already recorded.
  void fail(const char* key, const std::string& expected, const nlohmann::json* got);
  void fail_message(const std::string& message);
  bool ok() const { return !error_.has_value(); }
  std::string path_of(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& file() const { return file_; }

  // Unknown keys become an error; returns the first error seen (or OK).
  Status finish();

 private:
  const nlohmann::json* find(const char* key);

  const nlohmann::json& obj_;
  std::string file_;
  std::string path_;
  std::set<std::string> known_;
  std::optional<std::string> error_;
};

// A JSON value as an error message shows what it got: its JSON text, bad UTF-8 replaced, cut after 57
// characters.
std::string show_value(const nlohmann::json& v);

// Reads the free-form "notes" key of a data file (a string or an array of strings), which the simulator
// does not use; anything else there is an error.
void read_notes(JsonReader& r);
// Reads the "sources" key of a data file whose root is `root`: an object from the dotted path of a field of
// this file (a value that is not an object, e.g. params.active) to a non-empty string saying where the value
// comes from, so that a typo in the documentation is caught like a typo in the data.
void read_sources(JsonReader& r, const nlohmann::json& root, std::map<std::string, std::string>& out);
// An array of numbers at `key` of `r` (missing = empty), each in [lo, hi]; the error names the key and
// says "an array of <what>".
std::vector<double> read_numbers(JsonReader& r, const char* key, double lo, double hi, const char* what);
// The value at a dotted path ("params.active") of `root`, or nullptr.
const nlohmann::json* at_path(const nlohmann::json& root, const std::string& dotted);

// The longest simulated time a scenario or a trace may leave a run with nothing to do: the expected wait for
// an online run's first arrival (1 / workload.aps, 1 / workload.aps_change.aps) and a turn's think time. A
// run's periodic checks cost wall time in proportion to simulated time (about 4.5 s per 1e6 s), so a larger
// value is a run in which nothing happens for minutes of wall time and days of simulated time: an error.
inline constexpr double kMaxIdleS = 1e6;

// Largest input files accepted, in bytes: a larger "file" (e.g. /dev/zero) is an error instead of
// exhausting memory. Real traces are a few MB, JSON data files a few KB.
inline constexpr size_t kMaxInputFileBytes = size_t{256} << 20;  // default of read_text_file (traces)
inline constexpr size_t kMaxJsonFileBytes = size_t{16} << 20;    // scenario, hardware and model files

// Reads a whole file into memory. Errors name the file: missing, a directory ("expected <kind>, got a
// directory"), not a regular file (a FIFO, socket or device, which would block or never end), unopenable, a
// read error, or larger than max_bytes.
StatusOr<std::string> read_text_file(const std::string& path, const std::string& kind,
                                     size_t max_bytes = kMaxInputFileBytes);

// Parses `text` as JSON whose top level must be an object; `name` stands for the file in error messages
// (with the line:column of a syntax error). Never throws.
StatusOr<nlohmann::json> parse_json_object(const std::string& text, const std::string& name);

// read_text_file(path, "a JSON file") + parse_json_object(text, path).
StatusOr<nlohmann::json> read_json_file(const std::string& path);

// Applies `--set a.b.c=value` to `root`. The value is parsed as JSON when it parses (numbers, true,
// false, arrays, objects, quoted strings) and taken as a plain string otherwise. Intermediate objects are
// created. The type is checked later by the loader, exactly as for the file.
Status apply_override(nlohmann::json& root, const std::string& assignment);
// An error of a loader whose failing field was set by one of `overrides` ("key.path=value"), said so:
// "file: --set k=v: k: expected ..." (the last override related to the field's JSON path); otherwise `s`.
Status attribute_to_override(Status s, const std::string& file, const std::vector<std::string>& overrides);
// The JSON path of a loader's error "file: path: ..." ("" when the message is not of that form).
std::string error_path(const std::string& message, const std::string& file);

}  // namespace sim::config
