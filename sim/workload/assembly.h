// The turns a run simulates, from the scenario's workload block: offline or online agents over native
// trajectories (a trace file or the generated dataset, scaled by workload.append_scale / gen_scale), or the
// sessions of a replayed trace (workload.trace_format mooncake | azure | alibaba). Turns beyond the model's
// context are an input error or dropped (workload.over_context). Pure: no SimGrid.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/core/status.h"
#include "sim/workload/agents.h"
#include "sim/workload/replay_turn.h"
#include "sim/workload/trajectory.h"

namespace sim::workload {

struct Workload {
  std::vector<Trajectory> trajectories;  // the agents point into it
  std::vector<Agent> agents;
  std::vector<std::vector<ReplayTurn>> replay;  // trace replay: one list of turns per session
  WorkloadTotals totals;
  int64_t dropped_turns = 0;  // over the model's context (workload.over_context = drop)
};

// Bad input (an unreadable trace, a turn over the context with over_context = error) is an error naming
// the scenario, the field and the trace's line or trajectory.
StatusOr<Workload> build_workload(const config::ScenarioConfig& sc);

}  // namespace sim::workload
