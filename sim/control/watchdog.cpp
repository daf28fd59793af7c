#include "sim/control/watchdog.h"

#include <cstdint>

#include "sim/engine/interrupt.h"
#include "sim/engine/sg_compat.h"

namespace sim::control {

void Watchdog::start() {
  if (c_.sc.sim.time_limit_s > 0) {
    engine::spawn_daemon("time-limit", c_.h.control, [this]() {
      engine::sleep_for(c_.sc.sim.time_limit_s);
      if (!c_.run.finished()) c_.run.stop("time_limit", engine::now());
    });
  }
  engine::spawn_daemon("watchdog", c_.h.control, [this]() {
    uint64_t last_work = 0;
    double last_change = 0;
    while (!c_.run.finished()) {
      if (engine::stop_signal() != 0) {
        c_.run.stop(engine::stop_signal_name(), engine::now());
        return;
      }
      const uint64_t work = c_.transport.transfers() + static_cast<uint64_t>(c_.rec.timed_activities) +
                            static_cast<uint64_t>(c_.rec.turns_completed);
      if (work != last_work || c_.requests.in_flight() == 0) {
        last_work = work;
        last_change = engine::now();
      } else if (engine::now() - last_change >= engine::kStallTimeoutS) {
        c_.run.stop("stall", engine::now());
        return;
      }
      engine::sleep_for(engine::kInterruptCheckS);
    }
  });
}

}  // namespace sim::control
