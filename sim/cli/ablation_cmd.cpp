// `dpsim ablation SCENARIO [--agents 1024,2048] [--jobs N] [--out DIR] [--set k=v]...`: DualPath's
// ablation, Basic -> + layerwise prefill -> + dual-path loading -> + scheduler (sim/study/ablation.h).
#include "sim/cli/commands.h"
#include "sim/study/ablation.h"

namespace sim::cli {

void add_ablation_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("ablation",
                                 "Basic -> +layerwise prefill -> +dual-path loading (load-blind, and "
                                 "queue-aware) -> +scheduler: JCTs and reductions");
  static study::AblationSpec a;
  cmd->add_option("scenario", a.scenario, "Scenario JSON (e.g. scenarios/paper/ablation-ds660b-64k.json)")
      ->required();
  cmd->add_option("--agents", a.agents, "Agent counts, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--jobs", a.jobs, "Child runs at a time")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--out", a.out, "Directory of the results JSONs and summary.json")->capture_default_str();
  cmd->add_option("--set", a.sets, "Overrides applied to every run (before the step's policy toggles)");
  cmd->callback([exit_code]() { *exit_code = finish(study::run_ablation(a, stdio_console())); });
}

}  // namespace sim::cli
