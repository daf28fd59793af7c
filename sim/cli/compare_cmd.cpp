// `dpsim compare A B [--tolerance PERCENT]`: two results JSONs side by side, then each metric in which B is
// worse beyond the tolerance; exit 1 when there is one (sim/study/compare.h).
#include "sim/cli/commands.h"
#include "sim/study/compare.h"

namespace sim::cli {

void add_compare_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("compare", "Two results JSONs side by side; exit 1 when B is worse than A");
  static study::CompareSpec a;
  cmd->add_option("a", a.a, "Results JSON A (the reference)")->required();
  cmd->add_option("b", a.b, "Results JSON B (the candidate)")->required();
  cmd->add_option("--tolerance", a.tolerance, "Percent by which B may be worse")->capture_default_str();
  cmd->callback([exit_code]() { *exit_code = finish(study::run_compare(a)); });
}

}  // namespace sim::cli
