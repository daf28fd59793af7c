// `dpsim plan SCENARIO [--min-nodes N] [--max-nodes N] [--max-splits K] [--all-splits] [--slo-ttft S]
//  [--slo-tpot S] [--jct-target S] [--objective gpus|cost] [--set-list key=v1,v2]... [--set k=v]...
//  [--jobs N] [--out DIR] [--emit-jobs FILE]`: the cheapest cluster for a workload (README.md, "Capacity
// planning"). The study is sim/study/plan.h.
#include "sim/cli/commands.h"
#include "sim/study/plan.h"

namespace sim::cli {

void add_plan_command(CLI::App& app, int* exit_code) {
  auto* cmd =
      app.add_subcommand("plan", "The smallest or cheapest cluster that serves a workload (SLO or JCT)");
  static study::PlanSpec a;
  cmd->add_option("scenario", a.scenario, "Scenario JSON (online: plan on the SLO; offline: on the JCT)");
  cmd->add_option("--min-nodes", a.min_nodes, "Smallest cluster searched, in nodes")->capture_default_str();
  cmd->add_option("--max-nodes", a.max_nodes, "Largest cluster searched, in nodes")->capture_default_str();
  cmd->add_option("--max-splits", a.max_splits, "P:D splits tried per size, spread over the analytic range")
      ->capture_default_str();
  cmd->add_flag("--all-splits", a.all_splits,
                "Try every P:D split of each size, not only the analytic range");
  cmd->add_option("--slo-ttft", a.slo_ttft, "Online: TTFT bound, s (default: the scenario's slo.ttft_s)");
  cmd->add_option("--slo-tpot", a.slo_tpot, "Online: TPOT bound, s (default: the scenario's slo.tpot_s)");
  cmd->add_option("--jct-target", a.jct_target,
                  "Offline: the smallest cluster with JCT <= this, s (default: minimise JCT x size)");
  cmd->add_option("--objective", a.objective, "Size to minimise: gpus, or cost (needs cost.per_node_hour)")
      ->capture_default_str();
  cmd->add_option("--set-list", a.set_lists, "Choices to search too: key.path=v1,v2 (repeatable)");
  cmd->add_option("--set", a.sets, "Override for every run: key.path=value (repeatable)");
  cmd->add_option("--jobs,-j", a.jobs, "Child runs at a time (default: the number of cores)");
  cmd->add_option("--out", a.out, "Output directory (default out/plan-<scenario name>)");
  cmd->add_option("--emit-jobs", a.emit_jobs,
                  "Write the next round's `dpsim run` commands to FILE and stop (rerun to go on)");
  cmd->callback([exit_code]() { *exit_code = finish(study::run_plan(a, stdio_console())); });
}

}  // namespace sim::cli
