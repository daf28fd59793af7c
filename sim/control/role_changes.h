// RoleChanges: the scenario's role_change events (scenarios/README.md, "events"). From at_s each named node
// drains: it takes no new request (Membership::accepting), the requests routed to its DE group but not yet
// on a DE go back to the global queue, and the requests it holds finish where they are (no handover: their
// reads, prefill, decode and persists complete on it). Once it holds nothing (its engines carry no load,
// nothing waits or is being persisted, its DRAM buffer is empty, no read is queued at it), it switches:
// Membership names its new role, both roles' EP groups and HBM for KV follow the live counts (the
// re-sharding of the weights is not timed), its DRAM buffer and HBM start empty, and the engines of its new
// role on it take requests. One daemon per (event, node), on the control host; a node named by two events
// takes the second once the first has switched it. An autoscaler (control/autoscaler.h) asks for a conversion
// at run time with request(): the same drain and switch.
#pragma once

#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <string>
#include <vector>

#include "sim/engine/context.h"

namespace sim::metrics {
class Timeline;
}
namespace sim::engine {
class Dispatcher;
class PrefillService;
class DecodeService;
}  // namespace sim::engine

namespace sim::control {

class RoleChanges {
 public:
  RoleChanges(engine::EngineContext& c, engine::PrefillService& prefill, engine::DecodeService& decode,
              engine::Dispatcher& dispatcher);

  // The daemons start() spawns: one per node of each role_change event.
  size_t actors() const;
  void start();
  // A conversion decided at run time (control/autoscaler.h): `node` drains from now, then serves `to`.
  // Spawns its daemon; returns its index for change_json().
  size_t request(int node, platform::NodeRole to);
  // Whether some node is draining now.
  bool draining() const;
  // What a requested conversion did: node, from, requests_at_drain, drain_from_s, switched_at_s, drain_s.
  nlohmann::json change_json(size_t change) const;
  // Wakes the daemons that wait (at the end of the run): they return.
  void wake_all() { cv_->notify_all(); }
  // `f` is called when a drain begins ("role_change drain") and after every switch ("role_change"): the
  // live bottleneck range (control/live_range.h).
  void on_switch(std::function<void(const char* why)> f) { on_switch_ = std::move(f); }

  // What scenario event i did ({} when it is not a role change): per node, the requests it held when its
  // drain began, when it switched (null: the run ended first) and the drain's length; the live P and D
  // after the event's last switch.
  nlohmann::json to_json(size_t event) const;
  // The live counts changed otherwise (a node failed or came back: control/node_failures.h): summary.roles
  // records them from now.
  void live_changed();
  // summary.roles: the live prefill and decode nodes over time, as time-weighted means per series interval
  // up to `end_s`, and every switch.
  nlohmann::json roles_json(double end_s, double interval) const;  // interval: core/series_bound.h
  // Each node's drain, as a span on the timeline's "events" track.
  void mark(metrics::Timeline& timeline, double end_s) const;

 private:
  struct NodeChange {
    int node = 0;
    platform::NodeRole from = platform::NodeRole::kPrefill, to = platform::NodeRole::kDecode;
    int requests_at_start = 0;
    double drain_from_s = -1, switched_at_s = -1;
    int p_after = 0, d_after = 0;
  };
  static constexpr size_t kRequested = ~size_t{0};  // Change::event of a conversion decided at run time
  struct Change {
    size_t event = 0;
    double at_s = 0;
    std::vector<NodeChange> nodes;
  };
  void run(size_t change, size_t k);
  nlohmann::json node_json(const NodeChange& nc) const;
  bool drained(int node, platform::NodeRole role) const;
  void switch_node(NodeChange& nc);

  engine::EngineContext& c_;
  engine::PrefillService& prefill_;
  engine::DecodeService& decode_;
  engine::Dispatcher& dispatcher_;
  std::deque<Change> changes_;  // a deque: the daemons hold references into it while others are added
  size_t scripted_ = 0;         // the first changes_: the scenario's role_change events
  struct Live {
    double t_s = 0;
    int p = 0, d = 0;
  };
  std::vector<Live> live_;  // the live counts from each switch on (the first: the start)
  simgrid::s4u::ConditionVariablePtr cv_;
  std::function<void(const char*)> on_switch_;
};

}  // namespace sim::control
