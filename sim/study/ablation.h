// `dpsim ablation`: DualPath's ablation (paper §7.4; PAPER.md §6): Basic -> + layerwise prefill -> +
// dual-path loading -> + scheduler, each step adding one toggle to the previous one, at every agent count.
// Each run is a child `dpsim run`, up to `jobs` at a time; its results JSON goes to DIR/<agents>-<step>.json.
// The report is the four JCTs per agent count and each step's JCT change relative to Basic, also in
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
