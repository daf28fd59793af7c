// Unit tests of append and generation scaling (sim/workload/scaling.h) on hand-computed trajectories.
#include "sim/workload/scaling.h"

#include <catch2/catch.hpp>

using sim::workload::max_total_tokens;
using sim::workload::scale_trajectory;
using sim::workload::Trajectory;

namespace {

// Turns (append, gen) as a trajectory.
Trajectory traj(std::vector<std::pair<int, int>> turns) {
  Trajectory t{"t", {}};
  for (auto [a, g] : turns) t.turns.push_back({a, g, 0.0});
  return t;
}

std::vector<std::pair<int, int>> turns_of(const Trajectory& t) {
  std::vector<std::pair<int, int>> out;
  for (const auto& x : t.turns) out.emplace_back(x.append, x.gen);
  return out;
}

}  // namespace

TEST_CASE("Scaling: x1 keeps a trajectory that fits, x1.5 rounds half away from zero") {
  const Trajectory t = traj({{1000, 100}, {3, 5}, {1, 1}});
  CHECK(turns_of(scale_trajectory(t, 1, 1, 100000)) == turns_of(t));
  // 1000 x 1.5 = 1500; 3 x 1.5 = 4.5 -> 5; 1 x 1.5 = 1.5 -> 2. gen unchanged.
  CHECK(turns_of(scale_trajectory(t, 1.5, 1, 100000)) ==
        std::vector<std::pair<int, int>>{{1500, 100}, {5, 5}, {2, 1}});
  // gen x 0.1: 100 -> 10, 5 -> 0.5 -> 1 (round half away), 1 -> 0.1 -> 0 -> at least 1.
  CHECK(turns_of(scale_trajectory(t, 1, 0.1, 100000)) ==
        std::vector<std::pair<int, int>>{{1000, 10}, {3, 1}, {1, 1}});
}

TEST_CASE("Scaling: the trajectory ends before the first turn that passes MaxLen") {
  // x2: (2000, 200) -> context 2200; (2000, 200) -> 4400; (2000, 200) -> 6600 > 5000: cut there.
  const Trajectory t = traj({{1000, 200}, {1000, 200}, {1000, 200}, {1, 1}});
  CHECK(turns_of(scale_trajectory(t, 2, 1, 5000)) ==
        std::vector<std::pair<int, int>>{{2000, 200}, {2000, 200}});
  // Exactly MaxLen is kept: 4400 <= 4400.
  CHECK(scale_trajectory(t, 2, 1, 4400).turns.size() == 2);
  CHECK(scale_trajectory(t, 2, 1, 4399).turns.size() == 1);
  // Later short turns are not kept after the cut (the trajectory ends, it does not skip a turn).
  CHECK(scale_trajectory(t, 2, 1, 6601).turns.size() == 3);
}

TEST_CASE("Scaling: a first turn alone past MaxLen is cut to fit, gen first") {
  const Trajectory t = traj({{60000, 500}, {10, 10}});
  // x2: (120000, 500) > 65536: append = 65536 - 500 = 65036; the next turn would pass MaxLen.
  CHECK(turns_of(scale_trajectory(t, 2, 1, 65536)) == std::vector<std::pair<int, int>>{{65036, 500}});
  // gen itself past MaxLen: gen = 1, append = MaxLen - 1.
  CHECK(turns_of(scale_trajectory(traj({{10, 900}}), 1, 1, 100)) ==
        std::vector<std::pair<int, int>>{{99, 1}});
}

TEST_CASE("Scaling: think time kept, and the MAL of a file is its longest trajectory") {
  Trajectory t = traj({{10, 10}, {10, 10}});
  t.turns[1].think_s = 2.5;
  CHECK(scale_trajectory(t, 3, 3, 1000).turns[1].think_s == 2.5);
  CHECK(max_total_tokens({traj({{10, 10}}), traj({{100, 1}, {5, 5}}), traj({{1, 1}})}) == 111);
}
