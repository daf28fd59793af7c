#include "sim/workload/agents.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

namespace wl = sim::workload;

namespace {

// Trajectory i has i+1 turns of {100*(i+1) + k, 10 + k}.
std::vector<wl::Trajectory> make_trajectories(int n) {
  std::vector<wl::Trajectory> ts;
  for (int i = 0; i < n; ++i) {
    wl::Trajectory t;
    t.id = "t" + std::to_string(i);
    for (int k = 0; k <= i % 5; ++k) t.turns.push_back({100 * (i + 1) + k, 10 + k, 0.0});
    ts.push_back(t);
  }
  return ts;
}

std::vector<int> indices(const std::vector<wl::Agent>& agents) {
  std::vector<int> v;
  for (const auto& a : agents) v.push_back(a.trajectory_index);
  return v;
}

}  // namespace

TEST_CASE("Agents: fewer agents than trajectories -> agent i replays trajectory i unchanged", "[unit]") {
  auto ts = make_trajectories(5);
  auto agents = wl::build_offline_agents(ts, 3, 0, 512, 1);
  REQUIRE(agents.size() == 3);
  for (int i = 0; i < 3; ++i) {
    const wl::Agent& a = agents[static_cast<size_t>(i)];
    CHECK(a.id == i);
    CHECK(a.trajectory_index == i);
    CHECK(a.source == &ts[static_cast<size_t>(i)]);
    CHECK(a.synthetic_append == 0);
    REQUIRE(a.num_turns == static_cast<int>(ts[static_cast<size_t>(i)].turns.size()));
    CHECK(a.turn(0).append == ts[static_cast<size_t>(i)].turns[0].append);
  }
  CHECK(wl::build_offline_agents(ts, 0, 0, 512, 1).empty());
}

TEST_CASE("Agents: more agents than trajectories -> copies get a synthetic first round {S, 1}", "[unit]") {
  auto ts = make_trajectories(4);
  auto agents = wl::build_offline_agents(ts, 11, 0, 300, 5);
  REQUIRE(agents.size() == 11);
  for (int i = 0; i < 4; ++i) CHECK(agents[static_cast<size_t>(i)].synthetic_append == 0);
  for (size_t i = 4; i < 11; ++i) {
    const wl::Agent& a = agents[i];
    const wl::Trajectory& src = ts[static_cast<size_t>(a.trajectory_index)];
    REQUIRE(a.synthetic_append == 300);
    REQUIRE(a.num_turns == static_cast<int>(src.turns.size()) + 1);
    CHECK(a.turn(0).append == 300);
    CHECK(a.turn(0).gen == 1);
    for (int k = 1; k < a.num_turns; ++k) {
      CHECK(a.turn(k).append == src.turns[static_cast<size_t>(k - 1)].append);
      CHECK(a.turn(k).gen == src.turns[static_cast<size_t>(k - 1)].gen);
    }
  }
  // Copies come in shuffled rounds: agents 4..7 use every trajectory once; 8..10 three distinct ones.
  std::vector<int> idx = indices(agents);
  CHECK(std::set<int>(idx.begin() + 4, idx.begin() + 8) == std::set<int>{0, 1, 2, 3});
  CHECK(std::set<int>(idx.begin() + 8, idx.end()).size() == 3);
}

TEST_CASE("Agents: same seed -> same copies, different seed -> different sampling", "[unit]") {
  auto ts = make_trajectories(50);
  auto a = indices(wl::build_offline_agents(ts, 200, 0, 512, 1));
  auto b = indices(wl::build_offline_agents(ts, 200, 0, 512, 1));
  auto c = indices(wl::build_offline_agents(ts, 200, 0, 512, 2));
  CHECK(a == b);
  CHECK(a != c);
  // Not the identity: the copies are really shuffled.
  std::vector<int> identity;
  for (int i = 0; i < 50; ++i) identity.push_back(i);
  CHECK(std::vector<int>(a.begin() + 50, a.begin() + 100) != identity);
}

TEST_CASE("Agents: max_turns -> truncates, the synthetic round counting as a turn", "[unit]") {
  auto ts = make_trajectories(5);  // trajectory 4 has 5 turns
  auto agents = wl::build_offline_agents(ts, 10, 3, 512, 1);
  for (const auto& a : agents) {
    int full = static_cast<int>(ts[static_cast<size_t>(a.trajectory_index)].turns.size()) +
               (a.synthetic_append > 0 ? 1 : 0);
    CHECK(a.num_turns == std::min(full, 3));
  }
  CHECK(agents[4].num_turns == 3);
  CHECK(agents[0].num_turns == 1);
}

TEST_CASE("Agents: hit and miss tokens on a hand example -> earlier context and this append", "[unit]") {
  std::vector<wl::Trajectory> ts = {{"x", {{100, 10, 0.0}, {20, 5, 0.0}, {30, 7, 0.0}}}};
  auto agents = wl::build_offline_agents(ts, 2, 0, 512, 1);
  REQUIRE(agents.size() == 2);
  const wl::Agent& orig = agents[0];
  const wl::Agent& copy = agents[1];

  // Original: hit 0, 110, 135; miss 100, 20, 30.
  auto o = wl::all_turn_tokens(orig);
  REQUIRE(o.size() == 3);
  CHECK(o[0].hit == 0);
  CHECK(o[0].miss == 100);
  CHECK(o[0].gen == 10);
  CHECK(o[1].hit == 110);
  CHECK(o[1].miss == 20);
  CHECK(o[2].hit == 135);
  CHECK(o[2].miss == 30);
  CHECK(o[2].gen == 7);
  CHECK(wl::turn_tokens(orig, 2).hit == 135);

  // Copy: synthetic {512, 1} first, so every later hit grows by 513.
  auto c = wl::all_turn_tokens(copy);
  REQUIRE(c.size() == 4);
  CHECK(c[0].hit == 0);
  CHECK(c[0].miss == 512);
  CHECK(c[0].gen == 1);
  CHECK(c[1].hit == 513);
  CHECK(c[1].miss == 100);
  CHECK(c[2].hit == 623);
  CHECK(c[3].hit == 648);
  CHECK(c[3].miss == 30);
  CHECK(wl::turn_tokens(copy, 3).hit == 648);

  wl::WorkloadTotals w = wl::workload_totals(agents);
  CHECK(w.agents == 2);
  CHECK(w.turns == 7);
  CHECK(w.hit_tokens == (0 + 110 + 135) + (0 + 513 + 623 + 648));
  CHECK(w.miss_tokens == 150 + 662);
  CHECK(w.gen_tokens == 22 + 23);
}
