// EventRunner: the scenario's timed link events (scenarios/README.md, "events"), played by one daemon on the
// control host (role_change events are the engine's: control/role_changes.h). link_degrade: from at_s the
// matching link directions of a node run at `factor` of their bandwidth, from until_s at their own again. The
// change is SimGrid's own (Link::set_bandwidth): the flows crossing a link are shared anew from that instant,
// those in progress included. Utilisation stays measured against the nominal bandwidth.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/control/live_range.h"
#include "sim/core/status.h"
#include "sim/platform/handles.h"

namespace sim::metrics {
class Timeline;
}

namespace sim::control {

class EventRunner {
 public:
  // Finds each event's links. An event that matches no link (the storage backend is modelled only when
  // it is slower than the SNIC) is an error naming it.
  static StatusOr<EventRunner> make(const config::ScenarioConfig& sc, const platform::PlatformHandles& h);

  bool empty() const { return events_.empty(); }
  // After each edge (an event applied or restored), `live` is recomputed from the links' new bandwidths
  // (nullptr: nothing is). REQUIRES: it outlives the run.
  void watch(LiveRange* live) { live_ = live; }
  // Spawns the daemon (nothing without events).
  void start();
  // events[]: per event, what it did: its links ("n3 snic in"), and when it acted (null: not reached); an
  // event of another kind (role_change) is other(its index).
  nlohmann::json to_json(const std::function<nlohmann::json(size_t)>& other) const;
  // Each event that acted, as a span on the timeline's "events" track (until `end_s` if still on then).
  void mark(metrics::Timeline& timeline, double end_s) const;

 private:
  struct Played {
    config::EventConfig cfg;
    std::vector<const platform::TrackedLink*> links;
    double applied_at_s = -1, restored_at_s = -1;
  };
  void play();

  const platform::PlatformHandles* h_ = nullptr;
  std::vector<Played> events_;
  LiveRange* live_ = nullptr;
};

}  // namespace sim::control
