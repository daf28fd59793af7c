// `dpsim sweep SCENARIO (--pd 1:7,2:4 | --ratios 1/9,...,5 --nodes N | --p 1..8 --d 4)
//  [--set-list key=v1,v2]... [--set k=v]... [--jobs N] [--out DIR] [--threshold U] [--emit-jobs FILE]`
// and `dpsim sweep --merge DIR`: the study is sim/study/sweep.h.
#include "sim/cli/commands.h"
#include "sim/study/sweep.h"

namespace sim::cli {

void add_sweep_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("sweep", "Sweep P/D (x --set-list) and measure the bottleneck-free range");
  static study::SweepSpec a;
  cmd->add_option("scenario", a.scenario, "Scenario JSON");
  cmd->add_option("--pd", a.pd, "Grid of P:D pairs, e.g. 1:7,2:4");
  cmd->add_option("--ratios", a.ratios, "Grid of P/D ratios, e.g. 1/9,1/7,1,7/2,5 (with --nodes)");
  cmd->add_option("--nodes", a.nodes, "Total nodes for --ratios (largest multiple of a+b that fits)");
  cmd->add_option("--p", a.p_range, "Grid of P: lo..hi or a list (with --d)");
  cmd->add_option("--d", a.d, "Decode nodes for --p");
  cmd->add_option("--set-list", a.set_lists, "One more dimension: key.path=v1,v2 (repeatable)");
  cmd->add_option("--set", a.sets, "Override applied to every point (repeatable)");
  cmd->add_option("--jobs,-j", a.jobs, "Child runs at a time (default: the number of cores)");
  cmd->add_option("--out", a.out, "Output directory")->capture_default_str();
  cmd->add_option("--threshold", a.threshold, "Utilisation that counts as saturated")->capture_default_str();
  cmd->add_option("--emit-jobs", a.emit_jobs, "Write one `dpsim run` command per point to FILE; run nothing");
  cmd->add_option("--merge", a.merge, "Build DIR/summary.{json,csv} from DIR/points/*.json; run nothing");
  cmd->callback([exit_code]() { *exit_code = finish(study::run_sweep(a, stdio_console())); });
}

}  // namespace sim::cli
