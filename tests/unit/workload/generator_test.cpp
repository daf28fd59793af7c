#include "sim/workload/generator.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

namespace wl = sim::workload;

namespace {

// The tolerance traces/README.md states for sets of up to 4000 trajectories.
constexpr double kTolerance = 0.01;

bool same(const std::vector<wl::Trajectory>& a, const std::vector<wl::Trajectory>& b) {
  return wl::format_trajectories(a) == wl::format_trajectories(b);
}

void check_close(double got, double want, double tol, const char* what) {
  INFO(what << ": got " << got << ", Table 2 " << want);
  CHECK(std::fabs(got / want - 1) <= tol);
}

}  // namespace

TEST_CASE("Generator: Table 2 rows -> the paper's numbers", "[unit]") {
  REQUIRE(wl::dataset_targets().size() == 3);
  const wl::DatasetTargets* t = wl::find_dataset("64k");
  REQUIRE(t != nullptr);
  CHECK(t->max_len == 65536);
  CHECK(t->turns == 157);
  CHECK(t->append == 429);
  CHECK(t->gen == 176);
  CHECK(t->total == 55958);
  CHECK(t->context == 32721);
  CHECK(wl::find_dataset("32k")->max_len == 32768);
  CHECK(wl::find_dataset("48k")->total == 42607);
  CHECK(wl::find_dataset("128k") == nullptr);
  CHECK(wl::dataset_names() == "32k, 48k, 64k");
}

TEST_CASE("Generator: 500 trajectories per dataset, seed 1 -> five Table 2 averages within 1%, MaxLen held",
          "[unit]") {
  for (const wl::DatasetTargets& t : wl::dataset_targets()) {
    INFO("dataset " << t.name);
    wl::GeneratedDataset g = wl::generate_dataset_fitted(t.name, 500, 1);
    REQUIRE(g.trajectories.size() == 500);
    const wl::TraceAverages& a = g.achieved;
    check_close(a.turns, t.turns, kTolerance, "Turns");
    check_close(a.append, t.append, kTolerance, "Append");
    check_close(a.gen, t.gen, kTolerance, "Gen");
    check_close(a.total, t.total, kTolerance, "Total");
    check_close(a.context, t.context, kTolerance, "Context");
    CHECK(g.max_rel_error <= kTolerance);
    CHECK(a.max_total <= t.max_len);
    // Spread: not every trajectory is alike, and turn-weighted per-turn sizes are below the
    // per-trajectory ones (the reconciliation of Table 2, traces/README.md).
    CHECK(a.turn_append < 0.8 * a.append);
    CHECK(a.turn_turns > 1.3 * a.turns);
    for (size_t i = 0; i < g.trajectories.size(); ++i) {
      const wl::Trajectory& tr = g.trajectories[i];
      REQUIRE(tr.id == "t" + std::to_string(i));
      REQUIRE(!tr.turns.empty());
      REQUIRE(wl::total_tokens(tr) <= t.max_len);
      for (const wl::Turn& turn : tr.turns) {
        REQUIRE(turn.append >= 1);
        REQUIRE(turn.gen >= 1);
        REQUIRE(turn.think_s == 0);
      }
      // The first turn is the heavy one (system prompt + task).
      if (tr.turns.size() > 1) CHECK(tr.turns[0].append > 1000);
    }
  }
}

TEST_CASE("Generator: other seeds and sizes -> still within tolerance", "[unit]") {
  for (uint64_t seed : {2u, 99u}) {
    wl::GeneratedDataset g = wl::generate_dataset_fitted("48k", 300, seed);
    INFO("seed " << seed);
    CHECK(g.max_rel_error <= kTolerance);
    CHECK(g.achieved.max_total <= 49152);
  }
  // Above the fit sample (4000) the remainder follows the fitted shape: within a few %.
  wl::GeneratedDataset big = wl::generate_dataset_fitted("32k", 5000, 3);
  CHECK(big.max_rel_error <= 0.05);
  CHECK(big.achieved.max_total <= 32768);
}

TEST_CASE("Generator: same seed -> identical output, different seed -> different output", "[unit]") {
  auto a = wl::generate_dataset("32k", 200, 7);
  auto b = wl::generate_dataset("32k", 200, 7);
  auto c = wl::generate_dataset("32k", 200, 8);
  CHECK(same(a, b));
  CHECK_FALSE(same(a, c));
}

TEST_CASE("Generator: fixed shape and seed -> pinned values (the sampling algorithm is part of the format)",
          "[unit]") {
  // A change here changes every generated trace: do it on purpose and regenerate traces/synthetic/.
  wl::GeneratorShape shape{50, 300, 150, 8000, 0.8};
  auto ts = wl::generate_with_shape(*wl::find_dataset("32k"), shape, 3, 1);
  REQUIRE(ts.size() == 3);
  std::string first = wl::format_trajectories({ts[0]}).substr(0, 80);
  CHECK(first ==
        "{\"id\":\"t0\",\"turns\":[{\"append\":12359,\"gen\":38},{\"append\":33,\"gen\":47},{\"append\":7");
  CHECK(ts[0].turns.size() == 38);
  CHECK(wl::total_tokens(ts[1]) == 27462);
}

TEST_CASE("Generator: per-turn weighting -> turn-weighted averages match, real turns fall short", "[unit]") {
  wl::GeneratedDataset g = wl::generate_dataset_fitted("64k", 500, 1, wl::Weighting::kPerTurn);
  const wl::TraceAverages& a = g.achieved;
  const wl::DatasetTargets& t = *wl::find_dataset("64k");
  check_close(a.turn_turns, t.turns, kTolerance, "Turns (turn-weighted)");
  check_close(a.turn_append, t.append, kTolerance, "Append (turn-weighted)");
  check_close(a.turn_gen, t.gen, kTolerance, "Gen (turn-weighted)");
  check_close(a.turn_total, t.total, kTolerance, "Total (turn-weighted)");
  check_close(a.turn_context, t.context, kTolerance, "Context (turn-weighted)");
  CHECK(a.turns < 0.75 * t.turns);
  CHECK(a.max_total <= t.max_len);
}

TEST_CASE("Generator: compute_averages on a hand example -> both weightings", "[unit]") {
  // t0: turns (100,10),(20,5): total 135; prompts 100 and 130 -> context 115.
  // t1: one turn (50,50): total 100, context 50.
  std::vector<wl::Trajectory> ts = {{"t0", {{100, 10, 0.0}, {20, 5, 0.0}}}, {"t1", {{50, 50, 0.0}}}};
  wl::TrajectoryColumns c = wl::trajectory_columns(ts[0]);
  CHECK(c.turns == 2);
  CHECK(c.append == 60);
  CHECK(c.gen == 7.5);
  CHECK(c.total == 135);
  CHECK(c.context == 115);
  wl::TraceAverages a = wl::compute_averages(ts);
  CHECK(a.trajectories == 2);
  CHECK(a.turns == 1.5);
  CHECK(a.append == 55);  // (60 + 50) / 2
  CHECK(a.gen == 28.75);  // (7.5 + 50) / 2
  CHECK(a.total == 117.5);
  CHECK(a.context == 82.5);  // (115 + 50) / 2
  CHECK(a.turn_count == 3);
  CHECK(a.turn_append == Approx(170.0 / 3));
  CHECK(a.turn_gen == Approx(65.0 / 3));
  CHECK(a.turn_hit == Approx(110.0 / 3));  // 0 + 110 + 0
  CHECK(a.turn_context == Approx(280.0 / 3));
  CHECK(a.turn_turns == Approx(5.0 / 3));    // (4 + 1) / 3
  CHECK(a.turn_total == Approx(370.0 / 3));  // (2*135 + 100) / 3
  CHECK(a.max_total == 135);
  CHECK(wl::compute_averages({}).trajectories == 0);
}
