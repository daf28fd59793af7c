// `dpsim capacity`: the largest agent arrival rate (workload.aps, agents/s) at which an online scenario meets
// its SLO (summary.meets_slo of `dpsim run`: see scenarios/README.md, "slo").
//
// Search (each point is a child `dpsim run`, one at a time):
//   1. run lo and hi; lo must meet the SLO (else there is no capacity: capacity_aps null) and hi must not
//      (else the capacity is at least hi: capacity_aps = hi, and a warning says to raise --hi);
//   2. bisect: mid = (lo + hi) / 2 replaces lo when it meets the SLO, hi otherwise, until
//      hi <= lo (1 + tolerance);
//   3. confirm: run lo (1 + tolerance) unless it is hi; while it meets the SLO (the SLO boundary need
//      not be monotone in a seeded run), it becomes lo and the next step up is tried.
// So the reported capacity C meets the SLO and C (1 + tolerance) does not, both measured.
// Output JSON: {"kind": "capacity", "scenario", "slo": {"ttft_s", "tpot_s", "statistic"}, "capacity_aps",
// "tolerance", "points": [{"aps", "meets_slo", "stopped_by", "ttft_s", "tpot_s", "ttft_breakdown_s"}]}
// with points sorted by aps (what analysis/dpsim_plots reads).
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The command's options, as given.
struct CapacitySpec {
  std::string scenario;  // workload.mode online
  std::vector<std::string> sets;
  double lo = 0.05, hi = 2.0;  // lowest and highest APS tried
  double tolerance = 0.05;     // relative width of the final bracket
  std::string out;             // "" = out/capacity-<name>.json
};

// Runs the search and writes the capacity JSON. Each point's line goes to Console::out as it is measured;
// the report names the capacity and the file.
StatusOr<Outcome> run_capacity(const CapacitySpec& spec, const Console& console);

}  // namespace sim::study
