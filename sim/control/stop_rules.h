// StopRules: the online stop rules (scenarios/README.md, "workload.online"), checked every
// check_interval_s of simulated time by one daemon on the control host:
//   warm-up       not a stop: the time from which the SLO is judged (slo.warmup_s; "auto": the first check
//                 at which the agents' first turns are at most kWarmupShareFactor times their steady-state
//                 share 1 / (turns per agent) of the turns whose first token came in the SLO window, and
//                 that window holds slo_min_turns turns);
//   ttft_slo      after the warm-up, the windowed TTFT over slo.ttft_s, once the window holds slo_min_turns
//                 turns; windowed TTFT = the slo.statistic (mean, or a percentile) of the window's turns;
//                 slo.mode = relative: the share of the window's turns within their own TTFT bound
//                 (slo.ttft_scale x unloaded TTFT; a waiting turn by its age) under slo.attainment;
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
  // When the warm-up ended; -1 while it has not (or offline, where the rules do not run).
  double warmup_end_s() const { return warmup_end_s_; }

  // Auto warm-up: first turns at most this many times their steady-state share (dpsim's choice).
  static constexpr double kWarmupShareFactor = 2.0;

 private:
  void loop();
  const config::ScenarioConfig& sc_;
  const TtftLog& log_;
  RunControl& run_;
  bool warmup_over(double now) const;
  std::vector<std::pair<double, double>> steady_log_;  // (check time, windowed TTFT)
  double warmup_end_s_ = -1;
};

}  // namespace sim::control
