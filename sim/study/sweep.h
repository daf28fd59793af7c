// `dpsim sweep`: a grid of P:D points (crossed with --set-list values), one child `dpsim run` per point
// (DIR/points/<name>.json and .log; a point with a complete result is not run again), then DIR/summary.json
// and DIR/summary.csv with the measured and the analytic bottleneck-free ranges (README.md, "Sweeps, checks
// and comparisons"). The grid, the classification of each point and the summary: sweep_summary.h.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The most points a sweep runs (its grid times each --set-list's values): each is a child run.
inline constexpr int kMaxSweepPoints = 10000;

// The command's options, as given.
struct SweepSpec {
  std::string scenario;
  std::string pd;       // "1:7,2:4"
  std::string ratios;   // "1/9,1/7,1,7/2" (with nodes)
  std::string p_range;  // "1..8" or "1,2,4" (with d)
  int nodes = 0;
  int d = 0;
  std::vector<std::string> set_lists;  // "key.path=v1,v2"
  std::vector<std::string> sets;       // every point
  int jobs = 0;                        // child runs at a time (0: the number of cores)
  std::string out = "out/sweep";
  double threshold = 0.9;  // utilisation that counts as saturated
  std::string emit_jobs;   // non-empty: write the points' commands to this file and run nothing
  std::string merge;       // non-empty: only rebuild the summary of this directory
};

// Runs the sweep, or with `merge` rebuilds a summary. The report is the table of points and the ranges;
// the verdict fails when a point has no result.
StatusOr<Outcome> run_sweep(const SweepSpec& spec, const Console& console);

}  // namespace sim::study
