// `dpsim plan`: the cheapest cluster for a workload (README.md, "Capacity planning"). The search is
// plan_search.h; this study runs its rounds as child `dpsim run`s (DIR/points/<name>.json and .log; a point
// with a complete result is not run again, so a plan resumes) and writes DIR/plan.json.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The largest cluster a plan searches (--max-nodes): the search computes every P:D split of every size up to
// it, in time that grows with its square (about 5 s at 10,000 nodes, hours at a million).
inline constexpr int kMaxPlanNodes = 10000;

// The command's options, as given.
struct PlanSpec {
  std::string scenario;
  int min_nodes = 2, max_nodes = 16;  // cluster sizes searched, in nodes
  int max_splits = 5;                 // P:D splits tried per size
  bool all_splits = false;            // every split, not only the analytic range's
  double slo_ttft = 0, slo_tpot = 0;  // online: SLO bounds, s (0: the scenario's)
  double jct_target = 0;              // offline: the smallest cluster with JCT <= this (0: min JCT x size)
  std::string objective = "gpus";     // gpus | cost
  std::vector<std::string> set_lists, sets;
  int jobs = 0;           // child runs at a time (0: the number of cores)
  std::string out;        // "" = out/plan-<scenario name>
  std::string emit_jobs;  // non-empty: write the next round's commands to this file and stop
};

// Runs the search to its answer (or, with emit_jobs, to the next round it needs). The report is the table of
// points and the recommended cluster; the verdict fails when no cluster meets the goal or a run failed.
StatusOr<Outcome> run_plan(const PlanSpec& spec, const Console& console);

}  // namespace sim::study
