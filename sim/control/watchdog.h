// Watchdog: the daemons that may end a run from outside the engines, on the control host:
//   - sim.time_limit_s: stops the run there (stopped_by "time_limit"; the results are marked incomplete);
//   - SIGINT / SIGTERM (engine/interrupt.h): stops at the next check, every kInterruptCheckS;
//   - a stall: requests in flight, yet no new transfer, timed activity or finished turn for kStallTimeoutS
//     of simulated time (a deadlock) stops the run as "stall" instead of letting the daemons tick forever.
#pragma once

#include "sim/engine/context.h"

namespace sim::control {

class Watchdog {
 public:
  explicit Watchdog(engine::EngineContext& ctx) : c_(ctx) {}
  void start();

 private:
  engine::EngineContext& c_;
};

}  // namespace sim::control
