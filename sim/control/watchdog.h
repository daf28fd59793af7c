// Watchdog: the daemons that may end a run from outside the engines, on the control host:
//   - sim.time_limit_s: stops the run there (stopped_by "time_limit"; the results are marked incomplete);
//   - SIGINT / SIGTERM (engine/interrupt.h): stops at the next check, every kInterruptCheckS;
//   - a stall: requests in flight, yet nothing in flight and no new transfer, timed activity or finished turn
//   for kStallTimeoutS
//     of simulated time (a deadlock) stops the run as "stall" instead of letting the daemons tick forever;
//     a GPU execution or a transfer in flight is work, not a stall;
//   - after a stop before the turns are done, the work in flight runs for at most kDrainLimitS of
//     simulated time; then what is left is ended (its transfers stopped, its actors killed).
#pragma once

#include "sim/engine/context.h"

namespace sim::control {

class Watchdog {
 public:
  explicit Watchdog(engine::EngineContext& ctx) : c_(ctx) {}
  void start();

 private:
  void watch();  // until the run is over
  void drain();  // a stopped run's work in flight: engine::kDrainLimitS, then it is ended
  engine::EngineContext& c_;
};

}  // namespace sim::control
