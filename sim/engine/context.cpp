#include "sim/engine/context.h"

#include <algorithm>

#include "sim/engine/sg_compat.h"

namespace sim::engine {

void timed_sleep(EngineContext& c, double seconds) {
  c.rec.timed_activities++;
  c.rec.timed_in_flight++;
  c.rec.peak_activities = std::max(c.rec.peak_activities, c.rec.timed_in_flight + c.transport.in_flight());
  engine::sleep_for(seconds);
  c.rec.timed_in_flight--;
}

}  // namespace sim::engine
