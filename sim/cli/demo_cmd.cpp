// `dpsim demo` (what `make run` runs): the paper's hardware and its bottleneck-free range, then the default
// scenario with Basic, DualPath and the Oracle side by side (sim/study/demo.h).
#include "sim/cli/commands.h"
#include "sim/study/demo.h"

namespace sim::cli {

void add_demo_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("demo", "The default scenario with Basic and DualPath side by side");
  static study::DemoSpec a;
  cmd->add_option("--scenario", a.scenario, "Scenario JSON")->capture_default_str();
  cmd->add_option("--set", a.sets, "Overrides applied to both runs")->capture_default_str();
  cmd->add_option("--out-dir", a.out_dir, "Where the two results JSONs go")->capture_default_str();
  cmd->callback([exit_code]() { *exit_code = finish(study::run_demo(a, stdio_console())); });
}

}  // namespace sim::cli
