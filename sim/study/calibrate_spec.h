// The spec of `dpsim calibrate` (README.md, "Calibrate against your own measurements"): measured points,
// each a quantity of one `dpsim run`, and the 1 to 3 values of one file to fit to them: an engine file (the
// software: kernel efficiencies, the storage client's costs, ...) or a hardware file. Pure: no SimGrid.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::study {

inline constexpr int kMaxCalibrationParameters = 3;

// One measurement: a quantity of the results of one run.
struct MeasuredPoint {
  std::string name;      // letters, digits, '_' and '-', unique in the spec: names its runs' files
  std::string scenario;  // absolute path
  std::vector<std::string>
      sets;  // --set overrides of its runs ("key.path=value"); never the fitted file's field
  // The scenario fields its runs set to a candidate's copy of the file to fit: "engine" for an engine file;
  // for a hardware file "hardware" when both roles run on it through it, else "hardware_prefill" and/or
  // "hardware_decode" (the roles whose file it is, in a scenario with a different file per role).
  std::vector<std::string> target_fields;
  std::string quantity;  // a results key, one of calibration_quantities()
  double measured = 0;   // > 0, in the quantity's unit
  double tolerance = 0;  // relative, in (0, 1]: the point fits when |sim - measured| <= tol x measured
  double weight = 1;     // > 0: its squared relative error counts this many times in the fit's sum
  std::string source;    // where the measurement comes from (free text; may be empty)
};

// A value of the file to fit.
struct FreeParameter {
  std::string key;  // its key path in the file, e.g. "kernels.prefill_efficiency" (an engine file)
  double lower = 0, upper = 0;
  double start = 0;  // where the search begins: "start", else the middle of [lower, upper]
};

// clang-tidy's bugprone-exception-escape is a false positive here: clang-tidy 14 follows nlohmann::json's
// noexcept move and destructor into calls that can throw but that they never reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct CalibrationSpec {
  std::string file;  // the spec's path, as given
  std::string name;  // "name", else the file's stem
  std::string description;
  // The file the parameters belong to (absolute) and its kind, "engine" or "hardware": the spec's
  // "engine", else its "hardware", else the hardware file both roles of every point's scenario run on.
  // Every run of the fit uses a copy of it (for the roles on it, for a hardware file).
  std::string target_kind;
  std::string target_file;
  std::string target_name;                // its "name", else its stem
  nlohmann::ordered_json target;          // its content, in the file's key order
  std::vector<MeasuredPoint> points;      // at least as many as parameters
  std::vector<FreeParameter> parameters;  // 1 to kMaxCalibrationParameters
};

// The quantities a point may measure: the numeric keys of a results JSON's summary that a measurement of a
// real system can give (the JCT, latency statistics, throughputs, rates).
const std::vector<std::string>& calibration_quantities();

// Loads and checks a spec; strict: an unknown key is an error. Paths (scenarios, "engine", "hardware")
// resolve as given, else relative to the spec's folder, else to the project; a bare name is
// models/engine/<name>.json or models/hardware/<name>.json. Every point's scenario must load with its sets
// on the file to fit (an engine file: every point's scenario runs it); each parameter's bounds and start must
// be values the file takes at its key. Errors name the spec file and the field, on one line.
StatusOr<CalibrationSpec> load_calibration_spec(const std::string& path);

// The spec's file to fit with values[j] at parameters[j].key. REQUIRES: one value per parameter.
nlohmann::ordered_json target_with(const CalibrationSpec& spec, const std::vector<double>& values);

// The finite number at a dot-separated key of a JSON document (a results file's quantity, a file's value),
// or nullopt.
std::optional<double> number_at(const nlohmann::json& doc, const std::string& key);

}  // namespace sim::study
