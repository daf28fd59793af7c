// `dpsim props GRID.json [--set k=v]... [--jobs N] [--out DIR]`: runs a property grid and checks the
// relations that must hold on any scenario (sim/study/props.h). Exit 0 when every relation holds (or each
// violation is explained within its limit), 1 when one does not, 2 on bad input.
#include "sim/cli/commands.h"
#include "sim/study/props.h"

namespace sim::cli {

void add_props_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "props",
      "Run a property grid and check the relations that must hold on any scenario (exit 1 if one breaks)");
  static study::PropsStudySpec a;
  cmd->add_option("grid", a.grid, "Grid JSON (scenarios/props/*.json)")->required();
  cmd->add_option("--set", a.sets, "Override applied to every run, after the grid's own (repeatable)");
  cmd->add_option("--jobs,-j", a.jobs, "Child runs at a time (default: the number of cores)");
  cmd->add_option("--out", a.out, "Output directory (default: out/props/<grid name>)");
  cmd->callback([exit_code]() { *exit_code = finish(study::run_props(a, stdio_console())); });
}

}  // namespace sim::cli
