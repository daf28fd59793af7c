// Offline replay of a trace is a closed loop (scenarios/README.md, "workload.trace_format"): every session's
// first turn is issued at 0, and each later turn its think time after the session's previous turn ends.
// The trace gives arrivals, not when a turn ended, so the think time is what the arrival gap leaves once
// the previous turn has run at `service_s` (the caller's estimate of its time alone on the cluster):
//   think_k = max(0, arrival_k - arrival_(k-1) - service_s(turn k-1)),  think_0 = 0.
// On an idle cluster whose turns take exactly service_s, the loop then issues every turn at its trace
// arrival shifted by the session's first; under load the turns of a session move later together. Pure.
#pragma once

#include <functional>
#include <vector>

#include "sim/workload/replay_turn.h"

namespace sim::workload {

// A turn's time from issue to last token, alone on the cluster (seconds, >= 0).
using ServiceTime = std::function<double(const ReplayTurn&)>;

// Sets think_s of every turn of every session as above. REQUIRES: each session's turns in arrival order.
void set_closed_loop_think(std::vector<std::vector<ReplayTurn>>& sessions, const ServiceTime& service_s);

}  // namespace sim::workload
