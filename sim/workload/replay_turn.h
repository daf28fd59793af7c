// A turn of a replayed trace (workload.trace_format mooncake | azure | alibaba): its tokens are given by the trace
// rather than derived from the agent's context.
#pragma once

namespace sim::workload {

// REQUIRES: hit >= 0, miss >= 1, gen >= 1.
struct ReplayTurn {
  double arrival_s = 0;  // the trace's arrival time
  double hit = 0;        // prompt tokens read from storage
  double miss = 1;       // prompt tokens computed
  double gen = 1;        // tokens generated
};

}  // namespace sim::workload
