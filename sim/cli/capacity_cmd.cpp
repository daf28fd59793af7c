// `dpsim capacity SCENARIO [--lo X] [--hi Y] [--tolerance T] [--set k=v]... [--out FILE]`: the largest
// agent arrival rate at which an online scenario meets its SLO (sim/study/capacity.h).
#include "sim/cli/commands.h"
#include "sim/study/capacity.h"

namespace sim::cli {

void add_capacity_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("capacity", "Largest workload.aps meeting the SLO (online scenario)");
  static study::CapacitySpec a;
  cmd->add_option("scenario", a.scenario, "Scenario JSON file (workload.mode online)")->required();
  cmd->add_option("--lo", a.lo, "Lowest APS tried (agents/s)")->capture_default_str();
  cmd->add_option("--hi", a.hi, "Highest APS tried (agents/s)")->capture_default_str();
  cmd->add_option("--tolerance", a.tolerance, "Relative width of the final bracket")->capture_default_str();
  cmd->add_option("--set", a.sets, "Override a field for every run: key.path=value (repeatable)");
  cmd->add_option("--out", a.out, "Capacity JSON path (default out/capacity-<name>.json)");
  cmd->callback([exit_code]() { *exit_code = finish(study::run_capacity(a, stdio_console())); });
}

}  // namespace sim::cli
