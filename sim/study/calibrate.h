// `dpsim calibrate SPEC` (README.md, "Calibrate against your own measurements"): fits 1 to 3 values of an
// engine or a hardware file to measured points (calibrate_spec.h) with child runs, by the search of
// fit_search.h on the sum of squared relative residuals (simulated - measured) / measured. calibrate() runs
// nothing itself: the caller's RunBatch makes the runs (a child `dpsim run` per point and candidate);
// run_calibrate() gives it the study executor's (executor.h).
//
// Files under the output folder DIR:
// - engine/<candidate>.json or hardware/<candidate>.json: the file to fit at a candidate's values (a copy;
//   the runs use it through --set engine=PATH, or --set hardware=PATH, or hardware_prefill /
//   hardware_decode for the roles on it in a scenario with a file per role); <candidate> = the values joined
//   by '_', e.g. 0.39_3.8e-05.
// - points/<point>@<candidate>.json (and .log): a run's results; a complete one is reused, so a rerun
//   replays the search without running and goes on where it stopped.
// - calibrate-manifest.json: what the runs depend on (the file to fit, the keys, each point's scenario
//   and sets); a DIR made for other runs is refused.
// - calibration.json: the fit: values, residuals, sensitivities, every candidate, runs, wall time.
// - <file name>-calibrated.json: the fitted file at the fitted values, a "sources" entry per fitted
//   key saying what it was fitted on and by which command.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/calibrate_spec.h"
#include "sim/study/fit_search.h"
#include "sim/study/study.h"

namespace sim::study {

struct CalibrateOptions {
  std::string out_dir;     // created when missing
  int max_runs = 60;       // child runs of the fit at most, reused ones included
  double step_tol = 1e-3;  // stop when the search's radius is below this share of each parameter's range
  std::string command;     // the command line, written into the outputs
};

// One child `dpsim run` of the fit: a point's scenario on a candidate's hardware copy.
struct CalibrationRun {
  std::string name;               // "<point>@<candidate>"
  std::vector<std::string> args;  // after the executable: run SCENARIO --quiet --out RESULT --set ...
  std::string result;             // its results JSON (absolute)
  std::string log;                // for its stdout and stderr (absolute)
};

// Runs a batch of runs (none complete yet) and returns each one's exit code; or nullopt when it does not
// run them (they were written out as commands: --emit-jobs).
using RunBatch = std::function<std::optional<std::vector<int>>(const std::vector<CalibrationRun>&)>;

struct PointFit {
  std::string name, quantity;
  double measured = 0, simulated = 0;
  double rel_error = 0;  // (simulated - measured) / measured
  double tolerance = 0;
  bool within = false;  // |rel_error| <= tolerance
  std::string result;   // the best candidate's run, relative to DIR
};

enum class CalibrationOutcome {
  kFitted,     // every point within its tolerance at the best values
  kNotFitted,  // the best values leave a point outside its tolerance (the files are written all the same)
  kPaused,     // the next batch's runs were handed out (RunBatch returned nullopt)
  kRunFailed,  // a run failed, or its result has no number at the quantity
  // (after these two, DIR holds only the manifest, the hardware copies and the runs so far)
};

struct Calibration {
  CalibrationOutcome outcome = CalibrationOutcome::kRunFailed;
  std::string message;         // kRunFailed: which run and its log; kPaused: how many runs were handed out
  std::vector<double> values;  // the fitted (best) values, one per parameter
  std::vector<PointFit> points;
  FitStop stop = FitStop::kStopped;
  double objective = 0;  // sum of the squared relative errors at the fitted values
  // Near the fit (FitResult): the elasticities, % change of points[i]'s quantity per 1% change of
  // parameter j; the condition number of the sensitivities per share of each range (nullopt: unknown or
  // infinite, the points do not determine the values); each point's scatter (relative, like rel_error) and
  // each parameter's spread (in its unit). Empty when unknown.
  std::vector<std::vector<double>> elasticity;
  std::optional<double> condition;
  std::vector<double> scatter, spread;
  std::vector<FitEvaluation> history;  // every candidate, in the order evaluated
  int candidates = 0;                  // evaluated, reused ones included
  int runs = 0;                        // candidates x points
  int runs_now = 0;                    // run by this call
  double wall_s = 0;
  std::string calibration_file, calibrated_file;  // written (kFitted, kNotFitted)
  std::string report;                             // what `dpsim calibrate` prints
};

// REQUIRES: a loaded spec. Errors (a bad option, a DIR made for other runs, a file that cannot be written)
// are one line, nothing run.
StatusOr<Calibration> calibrate(const CalibrationSpec& spec, const CalibrateOptions& options,
                                const RunBatch& run);

// The options of `dpsim calibrate`, as given.
struct CalibrateCommand {
  std::string spec;       // the spec's path
  std::string out;        // "" = out/calibrate-<spec name>
  std::string emit_jobs;  // "" = run the batches; else write each batch's commands here and pause
  int jobs = 0;           // child runs at a time (0: the number of cores)
  int max_runs = CalibrateOptions{}.max_runs;
  double step_tol = CalibrateOptions{}.step_tol;
};

// `dpsim calibrate`: loads the spec and runs the fit, each batch's runs through the study executor
// (executor.h; --jobs at a time, progress on Console::err) or written out (--emit-jobs). Verdict: kPass
// when every point is within its tolerance (or a batch was handed out), kFail when one is not (the files
// are written) or a run failed (its log named on Console::err). A bad spec or option: a Status.
StatusOr<Outcome> run_calibrate(const CalibrateCommand& command, const Console& console);

// A candidate's name: its values joined by '_' (shortest round-trip form).
std::string candidate_name(const std::vector<double>& values);

}  // namespace sim::study
