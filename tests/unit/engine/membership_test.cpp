// Membership (engine/membership.h): which nodes have engines of each role, and the live counts.
#include "sim/engine/membership.h"

#include <catch2/catch.hpp>

using sim::engine::Membership;
using sim::platform::NodeRole;

namespace {
sim::config::EventConfig change(std::vector<int> nodes, const std::string& to) {
  sim::config::EventConfig e;
  e.kind = "role_change";
  e.nodes = std::move(nodes);
  e.to = to;
  return e;
}
const std::vector<NodeRole> k2p3d = {NodeRole::kPrefill, NodeRole::kPrefill, NodeRole::kDecode,
                                     NodeRole::kDecode, NodeRole::kDecode};
}  // namespace

TEST_CASE("Membership: without role changes, a role's engines are its nodes' GPUs", "[unit]") {
  sim::config::EventConfig degrade;  // a link event changes no role
  const Membership m(k2p3d, {degrade}, 2);
  CHECK_FALSE(m.dynamic());
  CHECK(m.engine_nodes(NodeRole::kPrefill) == std::vector<int>{0, 1});
  CHECK(m.engine_nodes(NodeRole::kDecode) == std::vector<int>{2, 3, 4});
  using P = std::vector<std::pair<int, int>>;
  CHECK(m.engines(NodeRole::kPrefill) == P{{0, 0}, {0, 1}, {1, 0}, {1, 1}});
  CHECK(m.live_gpus(NodeRole::kDecode) == 6);
}

TEST_CASE("Membership: the nodes a role change names get engines of both roles, drain then switch",
          "[unit]") {
  Membership m(k2p3d, {change({3}, "prefill"), change({1}, "decode")}, 1);
  CHECK(m.dynamic());
  // Platform order within each role: node 3's PE comes after node 1's.
  CHECK(m.engine_nodes(NodeRole::kPrefill) == std::vector<int>{0, 1, 3});
  CHECK(m.engine_nodes(NodeRole::kDecode) == std::vector<int>{1, 2, 3, 4});
  CHECK(m.accepting(3, NodeRole::kDecode));
  CHECK_FALSE(m.accepting(3, NodeRole::kPrefill));
  int woken = -1;
  m.set_drain_waker([&](int n) { woken = n; });
  m.poke(3);  // not draining: nobody to wake
  CHECK(woken == -1);
  m.start_drain(3);
  CHECK(m.serves(3, NodeRole::kDecode));  // a draining node still serves its role
  CHECK_FALSE(m.accepting(3, NodeRole::kDecode));
  CHECK(m.live_nodes(NodeRole::kDecode) == 3);
  m.poke(3);
  CHECK(woken == 3);
  const auto epoch = m.epoch();
  m.switch_role(3, NodeRole::kPrefill);
  CHECK(m.epoch() == epoch + 1);
  CHECK(m.accepting(3, NodeRole::kPrefill));
  CHECK_FALSE(m.draining(3));
  CHECK(m.live_nodes(NodeRole::kPrefill) == 3);
  CHECK(m.live_nodes(NodeRole::kDecode) == 2);
}

TEST_CASE("Membership: units -> the role's nodes at the start fill units in order, joiners are dealt in turn",
          "[unit]") {
  // 2 GPUs per node; decode nodes 2, 3, 4 at the start; node 1 changes to decode later.
  const Membership m(k2p3d, {change({1}, "decode")}, 2);
  // Decode engines in platform order: node 1 (a joiner), then nodes 2, 3, 4.
  // Units of 2 GPUs (one node): nodes 2, 3, 4 are units 0, 1, 2; node 1 joins unit 0.
  CHECK(m.unit_of_engines(NodeRole::kDecode, 2) == std::vector<int>{0, 0, 0, 0, 1, 1, 2, 2});
  // Units of 6 GPUs (the whole role at the start): one unit, the joiner in it.
  CHECK(m.unit_of_engines(NodeRole::kDecode, 6) == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0});
  // Units of 1 GPU (within a node): 6 units, GPU by GPU; the joiner's GPUs go to units 0 and 1.
  CHECK(m.unit_of_engines(NodeRole::kDecode, 1) == std::vector<int>{0, 1, 0, 1, 2, 3, 4, 5});
  // Prefill: nodes 0 and 1 at the start, units of one node each; node 1 leaves later but stays in unit 1.
  CHECK(m.unit_of_engines(NodeRole::kPrefill, 2) == std::vector<int>{0, 0, 1, 1});
}

TEST_CASE("Membership: units with several joiners -> dealt round robin over the units, a node at a time",
          "[unit]") {
  // 1 GPU per node; prefill nodes 0, 1, decode nodes 2..5; nodes 0 and 1 both change to decode.
  const std::vector<NodeRole> roles = {NodeRole::kPrefill, NodeRole::kPrefill, NodeRole::kDecode,
                                       NodeRole::kDecode,  NodeRole::kDecode,  NodeRole::kDecode};
  const Membership m(roles, {change({0, 1}, "decode")}, 1);
  // Decode units of 2 GPUs: nodes 2, 3 -> unit 0; 4, 5 -> unit 1; joiner 0 -> unit 0, joiner 1 -> unit 1.
  CHECK(m.unit_of_engines(NodeRole::kDecode, 2) == std::vector<int>{0, 1, 0, 0, 1, 1});
}
