// `dpsim calibrate SPEC [--jobs N] [--out DIR] [--max-runs N] [--step-tol X] [--emit-jobs FILE]`: fits 1 to 3
// values of an engine or a hardware file to measured points (README.md, "Calibrate against your own
// measurements"; sim/study/calibrate.h). Exit 0: every point within its tolerance; 1: the best fit leaves a
// point outside (or a run failed); 2: bad input, nothing written.
#include "sim/cli/commands.h"
#include "sim/study/calibrate.h"

namespace sim::cli {

void add_calibrate_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("calibrate",
                                 "Fit up to three values of an engine or hardware file to measured points");
  static study::CalibrateCommand a;
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
  cmd->callback([exit_code]() { *exit_code = finish(study::run_calibrate(a, stdio_console())); });
}

}  // namespace sim::cli
