// `dpsim ablation`: DualPath's ablation (paper §7.4; PAPER.md §6): Basic -> + layerwise prefill -> +
// dual-path loading -> + the scheduling algorithm, at every agent count, under two definitions of the third
// step:
//   paper        dual-path loading with a load-blind choice of side (read_path=alternate: the DE side for the
//                decode nodes' share of the requests); the scheduler step brings Algorithm 1 and the
//                queue-aware choice together ("load-balanced path choice across SNICs" is the paper's
//                scheduling);
//   queue-aware  dual-path loading with the queue-aware choice already (read_path=dualpath), dpsim's
//                definition before, so the scheduler step adds Algorithm 1 alone.
// The scheduler step is the paper's scheduling (§6) whole: Algorithm 1 and the DE scheduling (§6.1) and the
// intra-engine compute quota (§6.2, policy.batching=quota); the steps before it batch FIFO without a quota
// (policy.batching=fifo), as Basic does (study/systems.h).
// Five runs per agent count (Basic, +layerwise, both dual-path steps, +scheduler), each a child `dpsim run`,
// up to `jobs` at a time; its results JSON goes to DIR/<agents>-<step>.json. The report is the five JCTs per
// agent count, each step's JCT change relative to Basic and each definition's steps, also in
// DIR/summary.json.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The command's options, as given.
struct AblationSpec {
  std::string scenario;
  std::vector<int> agents = {1024, 2048};
  int jobs = 1;  // child runs at a time
  std::string out = "out/ablation";
  std::vector<std::string> sets;  // every run, before the step's policy toggles
};

StatusOr<Outcome> run_ablation(const AblationSpec& spec, const Console& console);

}  // namespace sim::study
