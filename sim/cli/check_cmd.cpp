// `dpsim check SCENARIO... [--jobs N] [--out DIR]`: runs each scenario's variants and evaluates its
// "expect" bands (sim/study/check.h). Prints every band with the measured and the expected value; exits 1
// listing the broken bands, 2 on bad input or a failed run.
#include "sim/cli/commands.h"
#include "sim/study/check.h"

namespace sim::cli {

void add_check_command(CLI::App& app, int* exit_code) {
  auto* cmd =
      app.add_subcommand("check", "Run scenarios and check their \"expect\" bands (exit 1 if one breaks)");
  static study::CheckSpec a;
  cmd->add_option("scenarios", a.scenarios, "Scenario JSONs with an \"expect\" block")->required();
  cmd->add_option("--jobs,-j", a.jobs, "Child runs at a time (default: the number of cores)");
  cmd->add_option("--out", a.out, "Keep the runs' results in DIR (default: a temporary directory, removed)");
  cmd->callback([exit_code]() { *exit_code = finish(study::run_check(a, stdio_console())); });
}

}  // namespace sim::cli
