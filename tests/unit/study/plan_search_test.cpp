// Unit tests of the search of `dpsim plan` (sim/study/plan_search.h) against brute force over the same space:
// the search is driven to its end by an oracle that answers each run it asks for, and its answer must be
// the one found by evaluating every point, while it runs fewer.
#include "sim/study/plan_search.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>

using sim::study::GridPoint;
using sim::study::pareto_front;
using sim::study::plan_point;
using sim::study::plan_size;
using sim::study::plan_splits;
using sim::study::plan_step;
using sim::study::PlanChoice;
using sim::study::PlanGoal;
using sim::study::PlanObjective;
using sim::study::PlanOutcome;
using sim::study::PlanPoint;
using sim::study::PlanSpace;

namespace {

using Oracle = std::function<PlanOutcome(const PlanPoint&)>;

// Runs the search to its end; returns the final step and how many runs it asked for.
std::pair<sim::study::PlanStep, int> drive(const PlanSpace& s, const Oracle& oracle) {
  std::map<std::string, PlanOutcome> known;
  int runs = 0;
  for (int round = 0; round < 1000; ++round) {
    auto step = plan_step(s, known);
    if (step.needed.empty()) return {step, runs};
    for (const auto& p : step.needed)
      if (known.emplace(p.name, oracle(p)).second) runs++;
  }
  FAIL("the search did not end");
  return {};
}

PlanChoice paper_choice() {
  PlanChoice c;
  c.gpus_per_node = 8;
  c.has_range = true;
  c.pd_min = 1.0 / 7;
  c.pd_max = 3.5;
  return c;
}

// The best point by brute force: every split of every size; smallest objective value, then metric.
struct Brute {
  bool found = false;
  std::string name;
  double objective = 0;
  int points = 0;
};
Brute brute(const PlanSpace& s, const Oracle& oracle) {
  Brute b;
  double best_metric = 0;
  for (int c = 0; c < static_cast<int>(s.choices.size()); ++c)
    for (int n = s.min_nodes; n <= s.max_nodes; ++n)
      for (const auto& pd : plan_splits(n, s.choices[c], s)) {
        const PlanPoint p = plan_point(c, pd, s);
        const PlanOutcome o = oracle(p);
        b.points++;
        if (!o.ok) continue;
        const double size = plan_size(p, s);
        const double obj = s.goal == PlanGoal::kJctTimesSize ? o.metric * size : size;
        if (!b.found || obj < b.objective || (obj == b.objective && o.metric < best_metric)) {
          b = {true, p.name, obj, b.points};
          best_metric = o.metric;
        }
      }
  return b;
}

}  // namespace

TEST_CASE("Plan splits: inside the analytic range, thinned evenly, nearest split when none is inside") {
  PlanSpace s;
  s.max_splits = 100;
  const PlanChoice c = paper_choice();
  // 10 nodes: P/D in [1/7, 7/2] -> P = 2 (2/8) .. 7 (7/3); 1/9 and 8/2 = 4 and 9/1 are outside.
  auto all = plan_splits(10, c, s);
  REQUIRE(all.size() == 6);
  CHECK(all.front().p == 2);
  CHECK(all.back().p == 7);
  s.max_splits = 3;
  auto thin = plan_splits(10, c, s);
  REQUIRE(thin.size() == 3);
  CHECK(thin[0].p == 2);
  CHECK(thin[1].p == 5);  // index round(2.5) = 3 of P = 2..7 (lround rounds half away from zero)
  CHECK(thin[2].p == 7);
  // 2 nodes: 1/1 is inside. A range above every split of 3 nodes gives the nearest one (2:1).
  CHECK(plan_splits(2, c, s).size() == 1);
  PlanChoice high = c;
  high.pd_min = 5;
  high.pd_max = 9;
  auto nearest = plan_splits(3, high, s);
  REQUIRE(nearest.size() == 1);
  CHECK(nearest[0].p == 2);
  // Without pruning: every split.
  s.prune = false;
  s.max_splits = 1;
  CHECK(plan_splits(10, c, s).size() == 9);
}

TEST_CASE("Plan splits: units of 2 prefill and 4 decode nodes -> only splits made of whole units") {
  PlanSpace s;
  s.max_splits = 100;
  PlanChoice c = paper_choice();
  c.unit_p = 2;
  c.unit_d = 4;
  // 12 nodes: P even and D a multiple of 4: 4P8D and 8P4D (P/D 1/2 and 2, both inside [1/7, 7/2]); 2P10D,
  // 6P6D and 10P2D, whole nodes but not whole units, are left out.
  const auto twelve = plan_splits(12, c, s);
  REQUIRE(twelve.size() == 2);
  CHECK(twelve[0].p == 4);
  CHECK(twelve[1].p == 8);
  // 7 nodes split into no units (P even and D a multiple of 4 make an even sum): nothing to search, even
  // when the range would otherwise give its nearest split.
  CHECK(plan_splits(7, c, s).empty());
  s.prune = false;
  CHECK(plan_splits(6, c, s).size() == 1);  // 2P4D only
}

TEST_CASE("Plan search, SLO goal: random monotone feasibility -> the brute-force answer, with fewer runs") {
  std::mt19937_64 rng(7);
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    PlanSpace s;
    s.min_nodes = 2;
    s.max_nodes = 2 + static_cast<int>(rng() % 40);
    s.max_splits = 1 + static_cast<int>(rng() % 6);
    s.prune = rng() % 4 != 0;
    s.goal = PlanGoal::kSlo;
    s.choices = {paper_choice()};
    if (rng() % 2) {  // a second choice with other hardware
      PlanChoice c2 = paper_choice();
      c2.gpus_per_node = 4;
      c2.suffix = "-small";
      s.choices.push_back(c2);
    }
    // Feasible when P and D reach thresholds that grow with nothing but the choice: monotone in the size
    // for the splits that keep P/D balanced; the margin prefers balance.
    const int need_p = 1 + static_cast<int>(rng() % 20), need_d = 1 + static_cast<int>(rng() % 20);
    const Oracle oracle = [&](const PlanPoint& p) {
      const int scale = p.choice == 1 ? 2 : 1;  // the small nodes need twice as many
      const bool ok = p.pd.p >= scale * need_p && p.pd.d >= scale * need_d;
      return PlanOutcome{ok, std::abs(std::log(static_cast<double>(p.pd.p) / p.pd.d)) + 0.01 * p.nodes(),
                         ok ? "" : "short"};
    };
    const auto [step, runs] = drive(s, oracle);
    const Brute b = brute(s, oracle);
    INFO("trial " << trial << " max_nodes " << s.max_nodes << " need " << need_p << "/" << need_d);
    // Monotone in the size only for the sizes whose searched splits include a feasible one whenever a
    // smaller size has: check that property, then the answer's size.
    if (!b.found) {
      CHECK(step.recommended == -1);
      continue;
    }
    REQUIRE(step.recommended >= 0);
    const auto& r = step.best[step.recommended];
    // The search may only differ from brute force where feasibility is not monotone in the size over the
    // thinned splits; the oracle's is whenever every size at or above the brute-force answer is feasible.
    bool monotone = true;
    for (int c = 0; c < static_cast<int>(s.choices.size()); ++c) {
      bool seen_ok = false;
      for (int n = s.min_nodes; n <= s.max_nodes; ++n) {
        bool any = false;
        for (const auto& pd : plan_splits(n, s.choices[c], s)) any = any || oracle(plan_point(c, pd, s)).ok;
        if (seen_ok && !any) monotone = false;
        seen_ok = seen_ok || any;
      }
    }
    if (!monotone) continue;
    compared++;
    CHECK(r.objective == b.objective);
    CHECK(runs <= b.points);
  }
  CHECK(compared >= 80);  // most trials have an answer and are monotone: the comparison is not vacuous
}

TEST_CASE(
    "Plan search: units of 3 nodes per role -> the sizes that split into them, not the doublings of 2") {
  // Kimi K2's default units on 80 GB GPUs are 3 nodes per role: only multiples of 3 from 6 split. Feasible
  // from 6 prefill and 3 decode nodes: 9 nodes (6P3D, P/D 2 inside the range) is the smallest, by brute
  // force. The sizes 2, 4, 8, 16 and 32 of a search that doubles from 2 have no split at all.
  for (PlanGoal goal : {PlanGoal::kSlo, PlanGoal::kJctTimesSize}) {
    PlanSpace s;
    s.min_nodes = 2;
    s.max_nodes = 32;
    s.goal = goal;
    PlanChoice c = paper_choice();
    c.unit_p = 3;
    c.unit_d = 3;
    s.choices = {c};
    const Oracle oracle = [](const PlanPoint& p) {
      const bool ok = p.pd.p >= 6 && p.pd.d >= 3;
      // SLO: a margin; JCT x size: a JCT that falls with the size, so that the product is least at 9 nodes.
      return PlanOutcome{ok, ok ? 1000.0 / p.nodes() + 10.0 * p.nodes() : 0, ok ? "" : "short"};
    };
    const auto [step, runs] = drive(s, oracle);
    const Brute b = brute(s, oracle);
    REQUIRE(b.found);
    REQUIRE(step.recommended >= 0);
    const auto& r = step.best[step.recommended];
    INFO("goal " << static_cast<int>(goal) << ", brute force " << b.name);
    CHECK(r.objective == b.objective);
    if (goal == PlanGoal::kSlo) CHECK(r.point.pd.p + r.point.pd.d == 9);
    CHECK(runs <= b.points);
  }
}

TEST_CASE("Plan search, SLO goal: a wrong answer is caught (the smallest feasible size, not a larger one)") {
  PlanSpace s;
  s.max_nodes = 32;
  s.max_splits = 3;
  s.choices = {paper_choice()};
  // Feasible from 11 nodes on (any split): the doubling reaches 16, bisection must come down to 11.
  const Oracle oracle = [](const PlanPoint& p) { return PlanOutcome{p.nodes() >= 11, 1.0, ""}; };
  const auto [step, runs] = drive(s, oracle);
  REQUIRE(step.recommended == 0);
  CHECK(step.best[0].point.nodes() == 11);
  CHECK(step.best[0].size == 88);
  // Probed sizes: 2, 4, 8, 16 (doubling), then 12, 10, 11 (bisection): 7 sizes, not 31.
  std::set<int> sizes;
  for (const auto& p : step.probed) sizes.insert(p.nodes());
  CHECK(sizes == std::set<int>{2, 4, 8, 16, 12, 10, 11});
  // The neighbours rejected: the splits of 10 nodes (all fail).
  CHECK(step.rejected_neighbours.size() == plan_splits(10, s.choices[0], s).size());
  // Nothing feasible up to the largest size: no answer.
  const Oracle never = [](const PlanPoint&) { return PlanOutcome{false, 1.0, "no"}; };
  CHECK(drive(s, never).first.recommended == -1);
}

TEST_CASE("Plan search, JCT x size: a unimodal cost -> the brute-force minimum") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    PlanSpace s;
    s.min_nodes = 2;
    s.max_nodes = 3 + static_cast<int>(rng() % 60);
    s.max_splits = 2;
    s.goal = PlanGoal::kJctTimesSize;
    s.choices = {paper_choice()};
    // JCT = work / nodes + overhead x nodes: JCT x size is convex in the size, minimal near
    // sqrt(work / overhead). The split adds 1% per rank in the size's list of splits, so the best split
    // of every size is its first and the minimum over splits stays unimodal in the size (the search's
    // assumption).
    const double work = 1 + static_cast<double>(rng() % 10000), overhead = 0.1 + (rng() % 100) / 10.0;
    const Oracle oracle = [&](const PlanPoint& p) {
      const double n = p.nodes();
      const auto splits = plan_splits(p.nodes(), s.choices[0], s);
      int rank = 0;
      while (splits[rank].p != p.pd.p) rank++;
      const double jct = (work / n + overhead * n) / n * (1 + 0.01 * rank);
      return PlanOutcome{true, jct, ""};
    };
    const auto [step, runs] = drive(s, oracle);
    const Brute b = brute(s, oracle);
    INFO("trial " << trial << " max_nodes " << s.max_nodes << " work " << work << " overhead " << overhead);
    REQUIRE(step.recommended == 0);
    CHECK(step.best[0].objective == Approx(b.objective).epsilon(1e-12));
    CHECK(step.best[0].point.name == b.name);
    if (s.max_nodes > 20) CHECK(runs < b.points);
  }
}

TEST_CASE("Plan search, cost objective: a choice with dearer nodes loses though it needs fewer") {
  PlanSpace s;
  s.max_nodes = 16;
  s.objective = PlanObjective::kCost;
  PlanChoice cheap = paper_choice(), dear = paper_choice();
  cheap.price_per_node_hour = 10;
  cheap.suffix = "-cheap";
  dear.price_per_node_hour = 40;
  dear.suffix = "-dear";
  s.choices = {cheap, dear};
  // The dear nodes are twice as fast: 3 of them do what 6 cheap ones do; 6 x 10 = 60 < 3 x 40 = 120.
  const Oracle oracle = [](const PlanPoint& p) {
    return PlanOutcome{p.nodes() >= (p.choice == 0 ? 6 : 3), 1.0, ""};
  };
  const auto step = drive(s, oracle).first;
  REQUIRE(step.recommended == 0);
  CHECK(step.best[0].size == 60);
  CHECK(step.best[1].size == 120);
  s.objective = PlanObjective::kGpus;  // by GPUs the dear nodes win: 24 < 48
  const auto by_gpus = drive(s, oracle).first;
  CHECK(by_gpus.recommended == 1);
}

TEST_CASE("Plan size, a hardware file per role: each role's nodes at their own GPUs and price") {
  PlanSpace s;
  PlanChoice c = paper_choice();
  c.per_role = true;
  c.gpus_per_node = 8;
  c.decode_gpus_per_node = 4;
  c.price_per_node_hour = 30;
  c.decode_price_per_node_hour = 10;
  s.choices = {c};
  const PlanPoint p = plan_point(0, GridPoint{2, 4}, s);
  CHECK(c.gpus(p.pd) == 2 * 8 + 4 * 4);
  CHECK(plan_size(p, s) == 32);
  s.objective = PlanObjective::kCost;
  CHECK(plan_size(p, s) == 2 * 30 + 4 * 10);
  // A role with no price: the size is unknown (infinite), not the other role's price.
  s.choices[0].decode_price_per_node_hour.reset();
  CHECK_FALSE(s.choices[0].price_per_hour(p.pd).has_value());
  CHECK(std::isinf(plan_size(p, s)));
  // One file: the prefill node's values for every node.
  PlanChoice one = paper_choice();
  one.price_per_node_hour = 30;
  CHECK(one.gpus(GridPoint{2, 4}) == 48);
  CHECK(*one.price_per_hour(GridPoint{2, 4}) == 180);
}

TEST_CASE("Pareto front: against an all-pairs dominance check on random points") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<std::pair<double, double>> xy;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) xy.emplace_back(rng() % 10, rng() % 10);
    const auto front = pareto_front(xy);
    std::set<size_t> on(front.begin(), front.end());
    for (size_t i = 0; i < xy.size(); ++i) {
      bool dominated = false, duplicate_before = false;
      for (size_t j = 0; j < xy.size(); ++j) {
        if (j == i) continue;
        if (xy[j].first <= xy[i].first && xy[j].second <= xy[i].second && xy[j] != xy[i]) dominated = true;
        if (xy[j] == xy[i] && on.count(j)) duplicate_before = true;
      }
      // On the front exactly when no other point dominates it (one of equal points is kept).
      if (dominated) CHECK(on.count(i) == 0);
      if (!dominated) CHECK((on.count(i) == 1 || duplicate_before));
    }
  }
}
