// The floor an absolute SLO meets before any load: the workload's turns at their unloaded latency
// (cost/unloaded.h). A turn on a loaded cluster is not faster than alone on an idle one, so when the
// slo.statistic of the unloaded TTFTs (or TPOTs) is over the bound, no cluster size meets the SLO, and
// `dpsim plan` says so instead of searching. Pure: no SimGrid.
#pragma once

#include <cstdint>
#include <string>

#include "sim/config/scenario.h"
#include "sim/core/status.h"

namespace sim::study {

struct SloFloor {
  int64_t turns = 0;           // of the workload
  int64_t turns_sampled = 0;   // the turns the floor was computed on (every k-th, at most kMaxTurns)
  double ttft_over_share = 0;  // share of them whose unloaded TTFT is over slo.ttft_s
  double tpot_over_share = 0;  // share of those of more than one token whose unloaded TPOT is over slo.tpot_s
  double ttft_stat_s = 0;      // slo.statistic of their unloaded TTFT
  double tpot_stat_s = 0;      // slo.statistic of their unloaded TPOT
  bool unreachable = false;    // absolute SLO: a statistic over its bound
  std::string why;             // when unreachable: which bound, the statistic and the share over it
};

// Every turn of a trajectory hits its whole context so far (storage of unlimited capacity); a replayed
// trace's turns their trace's hits. REQUIRES: a loaded scenario.
StatusOr<SloFloor> slo_floor(const config::ScenarioConfig& sc);

}  // namespace sim::study
