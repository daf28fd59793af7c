// `dpsim calibrate SPEC [--jobs N] [--out DIR] [--max-runs N] [--step-tol X] [--emit-jobs FILE]`: fits 1 to 3
// values of a hardware file to measured points (README.md, "Calibrate against your own measurements"). The
// spec, the search, the residuals and the output files are sim/study/calibrate.h; this file parses the
// options, runs the search's batches as child `dpsim run`s and prints. Exit 0: every point within its
// tolerance; 1: the best fit leaves a point outside (or a run failed); 2: bad input, nothing written.
#include <fmt/format.h>

#include <cstdio>

#include "sim/cli/child_runs.h"
#include "sim/cli/commands.h"
#include "sim/core/paths.h"
#include "sim/study/calibrate.h"

namespace sim::cli {

namespace {

struct CalibrateArgs {
  std::string spec, out, emit_jobs;
  int jobs = 0, max_runs = 60;
  double step_tol = 1e-3;
};

int fail(const std::string& msg) {
  std::fprintf(stderr, "dpsim: calibrate: %s\n", msg.c_str());
  return 2;
}

std::vector<std::string> child_args(const study::CalibrationRun& r) {
  std::vector<std::string> args = {self_exe()};
  args.insert(args.end(), r.args.begin(), r.args.end());
  args.insert(args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
  return args;
}

int run_calibrate(const CalibrateArgs& a) {
  if (a.spec.empty()) return fail("expected a SPEC (a calibration spec JSON)");
  const auto spec = study::load_calibration_spec(a.spec);
  if (!spec) return fail(spec.status().message());
  study::CalibrateOptions o;
  o.out_dir = a.out.empty() ? "out/calibrate-" + spec->name : a.out;
  o.max_runs = a.max_runs;
  o.step_tol = a.step_tol;
  std::vector<std::string> cmd = {"dpsim", "calibrate", a.spec, "--out", o.out_dir};
  if (a.max_runs != CalibrateArgs{}.max_runs)
    cmd.insert(cmd.end(), {"--max-runs", std::to_string(a.max_runs)});
  if (a.step_tol != CalibrateArgs{}.step_tol)
    cmd.insert(cmd.end(), {"--step-tol", fmt::format("{}", a.step_tol)});
  o.command = shell_line(cmd);

  const int jobs = default_jobs(a.jobs);
  std::string emit_error;
  const study::RunBatch run =
      [&](const std::vector<study::CalibrationRun>& batch) -> std::optional<std::vector<int>> {
    if (!a.emit_jobs.empty()) {
      std::string lines;
      for (const auto& r : batch) lines += shell_line(child_args(r)) + "\n";
      emit_error = write_file_atomically(a.emit_jobs, lines);
      return std::nullopt;
    }
    std::vector<ChildJob> list;
    ChildProgress progress;
    for (const auto& r : batch) {
      list.push_back({child_args(r), r.log});
      progress.names.push_back(r.name);
    }
    std::fprintf(stderr, "calibrate: batch of %zu runs, %d at a time\n", batch.size(), jobs);
    return run_children(list, jobs, print_child_progress, &progress);
  };
  const auto c = study::calibrate(*spec, o, run);
  if (!c) return fail(c.status().message());
  if (!emit_error.empty()) return fail(emit_error);
  switch (c->outcome) {
    case study::CalibrationOutcome::kPaused:
      std::printf("%s: %s (run them, then run this dpsim calibrate again)\n", c->message.c_str(),
                  a.emit_jobs.c_str());
      return 0;
    case study::CalibrationOutcome::kRunFailed:
      std::fprintf(stderr, "dpsim: calibrate: %s\n", c->message.c_str());
      return 1;
    case study::CalibrationOutcome::kFitted:
    case study::CalibrationOutcome::kNotFitted:
      break;
  }
  std::printf("%s", c->report.c_str());
  return c->outcome == study::CalibrationOutcome::kFitted ? 0 : 1;
}

}  // namespace

void add_calibrate_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("calibrate", "Fit up to three hardware-file values to measured points");
  static CalibrateArgs a;
  cmd->add_option("spec", a.spec,
                  "Calibration spec JSON (README.md, \"Calibrate against your own measurements\")");
  cmd->add_option("--jobs,-j", a.jobs, "Child runs at a time (default: the number of cores)");
  cmd->add_option("--out", a.out, "Output directory (default out/calibrate-<spec name>)");
  cmd->add_option("--max-runs", a.max_runs, "Child runs of the fit at most, reused ones included")
      ->capture_default_str();
  cmd->add_option("--step-tol", a.step_tol, "Stop when the search's step is below this share of each range")
      ->capture_default_str();
  cmd->add_option("--emit-jobs", a.emit_jobs,
                  "Write the next batch's `dpsim run` commands to FILE and stop (rerun to go on)");
  cmd->callback([exit_code]() { *exit_code = run_calibrate(a); });
}

}  // namespace sim::cli
