// A turn of a replayed trace (workload.trace_format mooncake | azure | alibaba): its tokens are given by the
// trace rather than derived from the agent's context.
#pragma once

namespace sim::workload {

// REQUIRES: hit >= 0, miss >= 1, gen >= 1.
struct ReplayTurn {
  double arrival_s = 0;  // the trace's arrival time
  // Offline replay (a closed loop, closed_loop.h): the wait between the end of the session's previous turn
  // and this turn's issue; 0 for a session's first turn. Unused online (turns arrive at arrival_s).
  double think_s = 0;
  double hit = 0;   // prompt tokens read from storage
  double miss = 1;  // prompt tokens computed
  double gen = 1;   // tokens generated
};

}  // namespace sim::workload
