#include "sim/control/watchdog.h"

#include <algorithm>
#include <cstdint>
#include <simgrid/s4u.hpp>

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
    watch();
    if (c_.run.stopped_by() != "all_turns_done") drain();
  });
}

void Watchdog::watch() {
  uint64_t last_work = 0;
  double last_change = 0;
  while (!c_.run.finished()) {
    if (engine::stop_signal() != 0) {
      c_.run.stop(engine::stop_signal_name(), engine::now());
      return;
    }
    const uint64_t work = c_.transport.transfers() + static_cast<uint64_t>(c_.rec.timed_activities) +
                          static_cast<uint64_t>(c_.rec.turns_completed);
    // A GPU execution or a transfer in flight is work in progress, however long (a pass of a slow engine,
    // its exchange paced at the compute's rate), not a stall: each ends by itself.
    if (work != last_work || c_.requests.in_flight() == 0 || c_.gpu.running() > 0 ||
        c_.transport.in_flight() > 0) {
      last_work = work;
      last_change = engine::now();
    } else if (engine::now() - last_change >= engine::kStallTimeoutS) {
      c_.run.stop("stall", engine::now());
      return;
    }
    engine::sleep_for(engine::kInterruptCheckS);
  }
}

void Watchdog::drain() {
  // The watchdog is a daemon: when the services' actors have all returned, SimGrid ends it here.
  const double until = c_.run.stopped_at_s() + engine::kDrainLimitS;
  while (engine::now() < until) engine::sleep_for(std::min(engine::kInterruptCheckS, until - engine::now()));
  // What still runs: its transfers stop where they are, and its actors end (the GPU executions were
  // cancelled at the stop, engine/gpu_compute.h). Every actor woken by the stop has since returned from its
  // wait, so none is ended inside a wait that holds the run's mutex.
  c_.gpu.halt();
  c_.transport.abandon();
  for (const auto& a : simgrid::s4u::Engine::get_instance()->get_all_actors())
    if (!a->is_daemon()) a->kill();
}

}  // namespace sim::control
