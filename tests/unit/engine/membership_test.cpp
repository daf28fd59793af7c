// Membership (engine/membership.h): which nodes have engines of each role, and the live counts.
#include <catch2/catch.hpp>

#include "sim/engine/membership.h"

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
