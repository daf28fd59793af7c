#include "sim/engine/context.h"

#include <algorithm>

#include "sim/config/units.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

std::vector<int> engine_units(const EngineContext& c, platform::NodeRole r) {
  if (c.sc.model.weight_shards > 1)
    return c.members.unit_of_engines(
        r, config::unit_gpus(c.sc, r == platform::NodeRole::kPrefill ? config::UnitRole::kPrefill
                                                                     : config::UnitRole::kDecode));
  std::vector<int> alone(c.members.engines(r).size());
  for (size_t i = 0; i < alone.size(); ++i) alone[i] = static_cast<int>(i);
  return alone;
}

void timed_sleep(EngineContext& c, double seconds) {
  c.rec.timed_activities++;
  c.rec.timed_in_flight++;
  c.rec.peak_activities = std::max(c.rec.peak_activities, c.rec.timed_in_flight + c.transport.in_flight());
  engine::sleep_for(seconds);
  c.rec.timed_in_flight--;
}

}  // namespace sim::engine
