#include "sim/study/calibrate_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sim/core/paths.h"

namespace sim::study {

namespace {

namespace fs = std::filesystem;

constexpr double kPoorlyDetermined = 1e3;  // condition number of the sensitivities per share of each range

std::string percent(double share) {
  return fmt::format("{:+.2f}%", 100 * share);
}

const char* stop_name(FitStop s) {
  switch (s) {
    case FitStop::kStep:
      return "step";
    case FitStop::kExact:
      return "exact";
    case FitStop::kBudget:
      return "budget";
    case FitStop::kStopped:
      break;
  }
  return "stopped";
}

std::optional<double> value_in(const nlohmann::ordered_json& doc, const std::string& key) {
  return number_at(nlohmann::json::parse(doc.dump()), key);
}

nlohmann::json or_null(const std::vector<double>& v, size_t i) {
  return i < v.size() ? nlohmann::json(v[i]) : nlohmann::json();
}

// The sources entry of a fitted key in the calibrated file.
std::string source_of(const CalibrationSpec& spec, const CalibrateOptions& o, const Calibration& c,
                      size_t k) {
  const FreeParameter& p = spec.parameters[k];
  std::string others, fitted_on;
  for (const auto& q : spec.parameters)
    if (q.key != p.key) others += (others.empty() ? " with " : ", ") + q.key;
  for (const auto& f : c.points)
    fitted_on += fmt::format("{}{} {} measured {:g}, simulated {:.6g} ({}, tolerance {:g}%)",
                             fitted_on.empty() ? "" : "; ", f.name, f.quantity, f.measured, f.simulated,
                             percent(f.rel_error), 100 * f.tolerance);
  const std::optional<double> was = value_in(spec.target, p.key);
  return fmt::format(
      "CALIBRATION: {} fitted{} by dpsim calibrate in [{:g}, {:g}] on the points of {} ({}): {}. {}{}. "
      "Command: {}{}",
      c.values[k], others, p.lower, p.upper, spec.name, absolute_path(spec.file), fitted_on,
      c.outcome == CalibrationOutcome::kFitted ? "Every point within its tolerance"
                                               : "NOT FITTED: a point is outside its tolerance",
      k < c.spread.size()
          ? fmt::format("; spread {:.2g} (one standard deviation from the runs' scatter)", c.spread[k])
          : "",
      o.command, was ? fmt::format(". The file's value was {:g}", *was) : "");
}

}  // namespace

Status write_calibration(const CalibrationSpec& spec, const CalibrateOptions& o, const Calibration& c) {
  nlohmann::json j = {{"kind", "calibration"},
                      {"spec", absolute_path(spec.file)},
                      {"name", spec.name},
                      {"command", o.command},
                      {"target_kind", spec.target_kind},
                      {"target_file", spec.target_file},
                      {"calibrated_file", fs::path(c.calibrated_file).filename().string()},
                      {"fitted", c.outcome == CalibrationOutcome::kFitted},
                      {"stopped_by", stop_name(c.stop)},
                      {"step_tol", o.step_tol},
                      {"max_runs", o.max_runs},
                      {"objective", c.objective},
                      {"candidates", c.candidates},
                      {"runs", c.runs},
                      {"runs_this_invocation", c.runs_now},
                      {"wall_s", c.wall_s}};
  for (size_t k = 0; k < spec.parameters.size(); ++k) {
    const FreeParameter& p = spec.parameters[k];
    const std::optional<double> was = value_in(spec.target, p.key);
    j["parameters"].push_back({{"key", p.key},
                               {"lower", p.lower},
                               {"upper", p.upper},
                               {"start", p.start},
                               {"value", c.values[k]},
                               {"spread", or_null(c.spread, k)},
                               {"was", was ? nlohmann::json(*was) : nlohmann::json()}});
  }
  for (size_t i = 0; i < c.points.size(); ++i) {
    const PointFit& f = c.points[i];
    const MeasuredPoint& p = spec.points[i];
    j["points"].push_back({{"name", f.name},
                           {"scenario", p.scenario},
                           {"sets", p.sets},
                           {"quantity", f.quantity},
                           {"measured", f.measured},
                           {"tolerance", f.tolerance},
                           {"weight", p.weight},
                           {"source", p.source},
                           {"simulated", f.simulated},
                           {"rel_error", f.rel_error},
                           {"within_tolerance", f.within},
                           {"scatter", or_null(c.scatter, i)},
                           {"result", f.result}});
  }
  j["sensitivity"] = {
      {"elasticity", c.elasticity},
      {"condition_number", c.condition ? nlohmann::json(*c.condition) : nlohmann::json()},
      {"about",
       "elasticity[i][j]: % change of points[i]'s quantity per 1% change of parameters[j], from the "
       "least-squares plane through the candidates within a quarter of each range of the fit; "
       "condition_number: of the same sensitivities per share of each range (null: infinite, the points do "
       "not determine the values); points[i].scatter: the rms relative distance of the runs within 0.05 of "
       "each "
       "range of the fit from their own plane (the simulator's noise there); parameters[j].spread: one "
       "standard "
       "deviation of the fitted value that this scatter implies"}};
  j["history"] = nlohmann::json::array();
  for (const auto& e : c.history)
    j["history"].push_back({{"candidate", candidate_name(e.x)},
                            {"values", e.x},
                            {"rel_errors", e.r},
                            {"objective", e.objective}});

  nlohmann::ordered_json fitted = target_with(spec, c.values);
  fitted["name"] = spec.target_name + "-calibrated";
  for (size_t k = 0; k < spec.parameters.size(); ++k)
    fitted["sources"][spec.parameters[k].key] = source_of(spec, o, c, k);
  for (const auto& [file, text] : {std::pair<std::string, std::string>{c.calibration_file, j.dump(1) + "\n"},
                                   {c.calibrated_file, fitted.dump(2) + "\n"}})
    if (const std::string err = write_file_atomically(file, text); !err.empty()) return Status::error(err);
  return Status::ok();
}

std::string calibration_report(const CalibrationSpec& spec, const CalibrateOptions& o, const Calibration& c) {
  std::string s = fmt::format("calibrate {}: {} parameter(s) of {}, {} point(s)\n", spec.name,
                              spec.parameters.size(), spec.target_file, spec.points.size());
  const std::string why =
      c.stop == FitStop::kStep    ? fmt::format("the step fell below {:g} of each range", o.step_tol)
      : c.stop == FitStop::kExact ? "every residual is zero"
                                  : fmt::format("the run budget ran out (--max-runs {})", o.max_runs);
  s += fmt::format("search stopped: {}; {} candidates, {} runs ({} in this invocation), {:.1f} s\n", why,
                   c.candidates, c.runs, c.runs_now, c.wall_s);
  s += fmt::format("{:<30} {:>12} {:>10} {:>20} {:>10}\n", "parameter", "fitted", "spread", "range", "start");
  for (size_t k = 0; k < spec.parameters.size(); ++k) {
    const FreeParameter& p = spec.parameters[k];
    s += fmt::format("{:<30} {:>12.7g} {:>10} {:>20} {:>10.4g}\n", p.key, c.values[k],
                     k < c.spread.size() ? fmt::format("{:.2g}", c.spread[k]) : "-",
                     fmt::format("[{:g}, {:g}]", p.lower, p.upper), p.start);
  }
  s += fmt::format("{:<12} {:<26} {:>10} {:>10} {:>8} {:>9} {:>8}  {}\n", "point", "quantity", "measured",
                   "simulated", "error", "tolerance", "scatter", "fits");
  for (size_t i = 0; i < c.points.size(); ++i) {
    const PointFit& f = c.points[i];
    s += fmt::format("{:<12} {:<26} {:>10.6g} {:>10.6g} {:>8} {:>8g}% {:>8}  {}\n", f.name, f.quantity,
                     f.measured, f.simulated, percent(f.rel_error), 100 * f.tolerance,
                     i < c.scatter.size() ? fmt::format("{:.2f}%", 100 * c.scatter[i]) : "-",
                     f.within ? "yes" : "NO");
  }
  for (const MeasuredPoint& p : spec.points)
    if (p.weight != 1)
      s += fmt::format("weight of {}: {:g} (its squared error counts {:g} times in the fit's sum)\n", p.name,
                       p.weight, p.weight);
  if (!c.elasticity.empty()) {
    s += "sensitivity near the fit: % change of each quantity per 1% change of each parameter\n";
    s += fmt::format("{:<12}", "");
    for (const auto& p : spec.parameters) s += fmt::format(" {:>28}", p.key);
    s += "\n";
    for (size_t i = 0; i < c.elasticity.size(); ++i) {
      s += fmt::format("{:<12}", c.points[i].name);
      for (double v : c.elasticity[i]) s += fmt::format(" {:>28.3g}", v);
      s += "\n";
    }
    if (!c.condition || *c.condition > kPoorlyDetermined)
      s += fmt::format(
          "poorly determined: the condition number of the sensitivities is {}: some combination of the "
          "parameters barely changes the quantities, and other values along it fit nearly as well\n",
          c.condition ? fmt::format("{:.3g}", *c.condition) : "infinite");
    else
      s += fmt::format("condition number of the sensitivities (per share of each range): {:.3g}\n",
                       *c.condition);
  }
  if (!c.spread.empty())
    s += "scatter: the rms distance of the runs near the fit from their own plane (the simulator's noise "
         "there); spread: one standard deviation of the fitted value that it implies (values that far apart "
         "fit about as well)\n";
  const int outside = static_cast<int>(
      std::count_if(c.points.begin(), c.points.end(), [](const PointFit& f) { return !f.within; }));
  s += outside == 0 ? "fitted: every point is within its tolerance\n"
                    : fmt::format("NOT FITTED: {} of {} points outside their tolerance at the best values\n",
                                  outside, c.points.size());
  s += fmt::format("calibration: {}\ncalibrated {}: {}\n", c.calibration_file, spec.target_kind,
                   c.calibrated_file);
  return s;
}

}  // namespace sim::study
