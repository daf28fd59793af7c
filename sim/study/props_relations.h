// The pure half of `dpsim props` (no SimGrid, no processes): the property grid's spec, the runs it
// expands to, and the relations that must hold between their results JSONs on any scenario (README.md,
// "Property grid"; format and relations in scenarios/props/README.md).
//
// A grid crosses scenarios x P:D points x named policy sets; "monotone" policies also get variants
// with more SNIC bandwidth, more storage bandwidth and more agents. Relations:
//   completes               every run ends with all turns done (exit 0; no stall, no time limit)
//   invariants              byte conservation, every hit byte read once and loaded to its PE, no link
//                           above its capacity, no HBM or buffer held at the end
//   no_idle_storage         storage-bound run: every node that its read path reads on reads at least
//                           starve_fraction of those nodes' mean
//   no_idle_prefill_node    every prefill node computes at least starve_fraction of the prefill mean
//   oracle_is_bound         JCT(oracle) <= (1 + noise) JCT(any read path), same scheduler
//   dualpath_le_basic       Basic storage-bound: JCT(read_path dualpath) <= (1 + noise) JCT(read_path pe)
//   scheduler_vs_round_robin  JCT(scheduler dualpath) <= scheduler_ratio_max JCT(round_robin), the rest equal
//   more_snic_no_slower     JCT(SNIC x f) <= (1 + noise) JCT
//   more_storage_no_slower  JCT(storage x f) <= (1 + noise) JCT
//   more_agents_no_faster   JCT(agents x f) >= (1 - noise) JCT
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/sweep_summary.h"

namespace sim::study {

struct PropsPolicy {
  std::string name;               // [a-z0-9_]+, used in run names
  std::vector<std::string> sets;  // "key.path=value" overrides
};

struct PropsScenario {
  std::string file;           // resolved path
  std::string label;          // file stem, e.g. "ds27b-64k"
  std::vector<GridPoint> pd;  // its own P:D points, or the grid's
};

// A violation of `relation` on runs of `scenario` (label) at P:D points `pd` (empty = all) is explained:
// printed with `why`, not a failure, as long as the measured value stays within `limit` (a looser bound
// in the relation's direction, so a worse regression still fails).
struct PropsExplained {
  std::string relation, scenario, why;
  std::vector<GridPoint> pd;
  double limit = 0;
};

struct PropsSpec {
  std::string file, name, description;
  std::vector<PropsScenario> scenarios;
  std::vector<std::string> sets;  // every run
  std::vector<PropsPolicy> policies;
  std::vector<std::string> monotone_policies;  // names of `policies` that get the variants
  double snic_factor = 2, storage_factor = 2, agents_factor = 2;
  double noise = 0.03;                     // relative JCT band of the closed loop
  double starve_fraction = 0.5;            // a node below this share of the mean is starved
  double scheduler_ratio_max = 1.05;       // dualpath scheduler vs round_robin
  double storage_bound_utilization = 0.8;  // a run whose bottleneck is storage at >= this is storage-bound
  std::vector<PropsExplained> explained;
};

// Parses a grid file (strict: unknown keys are errors naming the file and JSON path). Scenario paths
// resolve against the grid file's directory, then the project root.
StatusOr<PropsSpec> parse_props_spec(const nlohmann::json& j, const std::string& file);

// One child `dpsim run`.
struct PropsRun {
  std::string name;     // "<label>.p<P>d<D>.<policy>.<variant>": file stem under runs/
  size_t scenario = 0;  // index into PropsSpec::scenarios
  GridPoint pd;
  std::string policy;
  std::string variant;  // "base", "snic", "storage", "agents"
};

// Every run of the grid: scenario-major, then P:D, policy, variant (base first). Variants only for the
// monotone policies.
std::vector<PropsRun> expand_props(const PropsSpec& spec);

// What a run left: its exit code (-1 = not run: skipped) and its results JSON (null when none).
// clang-tidy's bugprone-exception-escape is a false positive here: clang-tidy 14 follows nlohmann::json's
// noexcept move and destructor into calls that can throw but that they never reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RunOutcome {
  int code = -1;
  nlohmann::json result;
  std::string path;  // of the results JSON, for messages
};

// One evaluation of one relation on one run or pair of runs.
struct PropsCheck {
  std::string relation;
  std::vector<std::string> runs;  // run names (one or two)
  double measured = 0;
  double bound = 0;
  bool at_most = true;  // measured <= bound (else >=)
  bool ok = true;
  std::string explained;  // the explanation of a violation within its limit ("" = none)
  std::string detail;     // the figures, e.g. "JCT 40,759 s / 38,397 s"
};

// Evaluates every relation on the runs (outcomes[i] belongs to runs[i]; skipped runs have code -1 and are
// left out). Checks come in the order of the relation list above, runs in grid order.
std::vector<PropsCheck> evaluate_props(const PropsSpec& spec, const std::vector<PropsRun>& runs,
                                       const std::vector<RunOutcome>& outcomes);

// The report: {"kind": "props", "grid", "runs", "skipped", "relations": [{"name", "checks", "violations",
// "explained"}], "violations": [...], "explained": [...]} with each check's runs, measured, bound and detail.
nlohmann::json props_report(const PropsSpec& spec, const std::vector<PropsRun>& runs,
                            const std::vector<RunOutcome>& outcomes, const std::vector<PropsCheck>& checks,
                            const std::vector<std::string>& skipped);

}  // namespace sim::study
