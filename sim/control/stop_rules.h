// StopRules: the online stop rules (scenarios/README.md, "workload.online"), checked every
// check_interval_s of simulated time by one daemon on the control host:
//   ttft_slo      the windowed mean TTFT over slo.ttft_s, once the window holds slo_min_turns turns;
//   steady_state  the mean TTFT of the last steady_window_s within steady_tolerance (relative) of the same
//                 measure steady_lag_s earlier (DualPath §7.4).
#pragma once

#include <utility>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/control/driver.h"
#include "sim/control/run_control.h"
#include "sim/platform/handles.h"

namespace sim::control {

class StopRules {
 public:
  // REQUIRES: every reference outlives the rules.
  StopRules(const config::ScenarioConfig& sc, const TtftLog& log, RunControl& run)
      : sc_(sc), log_(log), run_(run) {}
  // Spawns the checking daemon on `host` (online mode only).
  void start(simgrid::s4u::Host* host);

 private:
  void loop();
  const config::ScenarioConfig& sc_;
  const TtftLog& log_;
  RunControl& run_;
  std::vector<std::pair<double, double>> steady_log_;  // (check time, windowed TTFT)
};

}  // namespace sim::control
