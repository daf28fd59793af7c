// Membership: which role each node serves now, and which nodes take new requests. Fixed for a run without
// role changes. With role_change events (control/role_changes.h) a node first drains: it keeps serving its
// role, takes no new request, and lets its requests finish; then it switches, and the engines of its new role
// on it take requests.
//
// The services build one engine per GPU of every node that serves their role at any time of the run (its
// nodes at the start, then the nodes that change to it), numbered node-major in platform order: without role
// changes that is PlatformHandles::engines_of(role), the same numbering. An engine on a node that does not
// serve its role holds nothing and is offered nothing.
//
// With node_down events (control/node_failures.h) a node may also be down: it keeps its role but serves
// nothing until it is up again (node_up). Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/platform/resource_class.h"

namespace sim::engine {

class Membership {
 public:
  // `roles`: each node's role at the start (the platform's). `gpus`: each node's GPUs (PlatformHandles::
  // gpus_on). `any_node`: any node may change role (an autoscaler decides which at run time): every node has
  // engines of both roles.
  Membership(const std::vector<platform::NodeRole>& roles, const std::vector<config::EventConfig>& events,
             const std::vector<int>& gpus, bool any_node = false);
  // Every node with `gpus_per_node` GPUs.
  Membership(const std::vector<platform::NodeRole>& roles, const std::vector<config::EventConfig>& events,
             int gpus_per_node, bool any_node = false)
      : Membership(roles, events, std::vector<int>(roles.size(), gpus_per_node), any_node) {}

  // Whether the scenario changes roles at all (then engines exist on nodes that do not serve their role).
  bool dynamic() const { return dynamic_; }
  platform::NodeRole role(int node) const { return role_[node]; }
  const std::vector<platform::NodeRole>& roles() const { return role_; }
  // Per node: non-zero while it drains.
  const std::vector<char>& draining_nodes() const { return draining_; }
  bool serves(int node, platform::NodeRole r) const { return role_[node] == r && !down_[node]; }
  // Serves role r and is not draining: the schedulers may place new requests on its engines.
  bool accepting(int node, platform::NodeRole r) const { return serves(node, r) && !draining_[node]; }
  bool down(int node) const { return down_[node] != 0; }
  // Per node: non-zero while it is down.
  const std::vector<char>& down_nodes() const { return down_; }
  bool draining(int node) const { return draining_[node] != 0; }
  // Nodes serving r now (draining ones included: they still serve it; down ones not).
  int live_nodes(platform::NodeRole r) const;
  int live_gpus(platform::NodeRole r) const;
  // The nodes with engines of role r (ever), in platform order, and those engines as (node, gpu).
  const std::vector<int>& engine_nodes(platform::NodeRole r) const {
    return r == platform::NodeRole::kPrefill ? pe_nodes_ : de_nodes_;
  }
  std::vector<std::pair<int, int>> engines(platform::NodeRole r) const;
  // Deployment units (config/units.h): the unit of each engine of role r, in engines(r) order. The GPUs of
  // the role's nodes at the start fill units of `unit_gpus` in platform order; a node that joins the role
  // later (a role change, the autoscaler) is dealt to the units in turn, in platform order, a node at a time
  // (a unit's GPUs at a time for units within a node). REQUIRES: the role's GPUs at the start are a
  // multiple of unit_gpus >= 1.
  std::vector<int> unit_of_engines(platform::NodeRole r, int unit_gpus) const;
  // Bumped at every switch, failure and recovery: the services re-read their live engines when it changes.
  uint64_t epoch() const { return epoch_; }

  void start_drain(int node) { draining_[node] = 1; }
  // The services call poke() where a node may have become idle (load left one of its engines, a persist
  // ended); while the node drains, that wakes the role-change controller (set_drain_waker).
  void set_drain_waker(std::function<void(int node)> w) { waker_ = std::move(w); }
  void poke(int node) const {
    if (draining_[node] && waker_) waker_(node);
  }
  // The drained node serves `to` from now on.
  void switch_role(int node, platform::NodeRole to) {
    role_[node] = to;
    draining_[node] = 0;
    ++epoch_;
  }
  // The node fails (it serves nothing from now on), or is up again (it serves its role).
  void fail(int node) {
    down_[node] = 1;
    ++failures_;
    ++epoch_;
  }
  void recover(int node) {
    down_[node] = 0;
    ++epoch_;
  }
  // Failures so far: a lock-step group compares it before and after its pass.
  uint64_t failures() const { return failures_; }

 private:
  std::vector<platform::NodeRole> role_;
  std::vector<platform::NodeRole> initial_;  // each node's role at the start
  std::vector<char> draining_, down_;
  std::vector<int> pe_nodes_, de_nodes_;
  std::vector<int> gpus_;  // per node
  uint64_t epoch_ = 0, failures_ = 0;
  bool dynamic_ = false;
  std::function<void(int)> waker_;
};

}  // namespace sim::engine
