// DualPath two-phase DE scheduling on hand-built engine states.
#include "sim/policy/dualpath/de_fetch.h"

#include <catch2/catch.hpp>
#include <random>
#include <vector>

namespace sim::policy::dualpath {
namespace {

EngineLoad de(int id, int seq, double tok, double free_hbm) {
  EngineLoad e;
  e.id = id;
  e.node = 1;
  e.seq = seq;
  e.tok = tok;
  e.free_hbm = free_hbm;
  return e;
}

// A request of len_r = `len` tokens (all of them hit, for simplicity).
RequestInfo req(uint64_t id, double len) {
  return {id, len, 0, 0};
}

}  // namespace

TEST_CASE("DE len: default len_r -> hit + miss + gen", "[unit]") {
  CHECK(de_len({1, 30000, 400, 900}) == 31300);
}

TEST_CASE("DE phase 1: global queue -> each request to the least-total-tok group, ties to the lowest index",
          "[unit]") {
  std::vector<double> group_tok = {100, 50, 50};
  // r0 (30): g1 -> 80; r1 (30): g2 -> 80; r2 (100): g1/g2 tie at 80 -> g1 -> 180; r3 (10): g2 -> 90;
  // r4 (5): g2 (90 < 100) -> 95; r5 (1): g2 -> 96.
  const std::vector<RequestInfo> q = {req(0, 30), req(1, 30), req(2, 100), req(3, 10), req(4, 5), req(5, 1)};
  CHECK(de_phase1(q, group_tok) == std::vector<int>{1, 2, 1, 2, 2, 2});
  CHECK(group_tok == std::vector<double>{100, 180, 96});
}

TEST_CASE("DE phase 1: len counts hit + miss + gen -> the group totals grow by all three", "[unit]") {
  std::vector<double> group_tok = {0, 0};
  CHECK(de_phase1({{0, 10, 5, 5}, {1, 1, 1, 1}}, group_tok) == std::vector<int>{0, 1});
  CHECK(group_tok == std::vector<double>{20, 3});
}

TEST_CASE("DE phase 2: hand example -> R, Z, the chosen DEs and the HBM stop", "[unit]") {
  // 1 byte per token, so need(r) = len_r. Free HBM 300 + 500 + 100 = 900; tok 100 + 200 + 0 = 300.
  std::vector<EngineLoad> des = {de(0, 2, 100, 300), de(1, 1, 200, 500), de(2, 0, 0, 100)};
  const std::vector<RequestInfo> q = {req(0, 200), req(1, 300), req(2, 250), req(3, 400)};
  DeFetchResult r = de_phase2(q, des, 1.0);
  // R: 200, 500, 750 <= 900, 1150 > 900 -> |R| = 3. Z = 1.05 x (750 + 300) / 3 = 367.5.
  CHECK(r.feasible == 3);
  CHECK(r.z == Approx(367.5).epsilon(1e-12));
  // r0 (200): fits e0 and e1 (not e2: 100 < 200); e0 + 200 = 300 <= Z, e1 + 200 = 400 > Z -> e0.
  // r1 (300): only e1 fits (e0 has 100 left); 200 + 300 > Z, no DE under Z -> least tok of the high: e1.
  // r2 (250): free HBM is 100, 200, 100 -> no DE -> stop, with 2 taken out of |R| = 3.
  CHECK(r.assignments == std::vector<DeAssignment>{{0, 0}, {1, 1}});
  CHECK(r.taken == 2);
  CHECK(r.stop == DeStop::kNoHbm);
  CHECK(des[0].seq == 3);
  CHECK(des[0].tok == 300);
  CHECK(des[0].free_hbm == 100);
  CHECK(des[1].seq == 2);
  CHECK(des[1].tok == 500);
  CHECK(des[1].free_hbm == 200);
  CHECK(des[2].seq == 0);
}

TEST_CASE("DE phase 2: several DEs under Z -> least seq wins over least tok, ties to tok then id", "[unit]") {
  // e4 has the fewest requests but no free HBM; its 1000 tokens lift the average so e0..e3 are all under
  // Z = 1.05 x (10 + 1014) / 5 = 215.04.
  std::vector<EngineLoad> des = {de(0, 3, 1, 1e6), de(1, 1, 5, 1e6), de(2, 1, 4, 1e6), de(3, 1, 4, 1e6),
                                 de(4, 0, 1000, 0)};
  DeFetchResult r = de_phase2({req(0, 10)}, des, 1.0);
  REQUIRE(r.z == Approx(215.04));
  // e0 has the least tok but 3 requests; e1, e2, e3 have 1; e2 and e3 tie on tok 4 -> e2 (lower id).
  CHECK(r.assignments == std::vector<DeAssignment>{{0, 2}});
  CHECK(r.stop == DeStop::kQueueEmpty);
}

TEST_CASE("DE phase 2: every feasible DE over Z -> the least tok among them, not the least seq", "[unit]") {
  // Z = 1.05 x (200 + 500) / 2 = 367.5; e0: 300 + 200 > Z, e1: 200 + 200 > Z.
  std::vector<EngineLoad> des = {de(0, 0, 300, 1e6), de(1, 5, 200, 1e6)};
  DeFetchResult r = de_phase2({req(0, 200)}, des, 1.0);
  REQUIRE(r.z == Approx(367.5));
  CHECK(r.assignments == std::vector<DeAssignment>{{0, 1}});
}

TEST_CASE("DE phase 2: need(r) = len_r x KV bytes per token -> a DE without that much HBM is skipped",
          "[unit]") {
  // 10 B per token. r0: len 100 -> 1000 B: e0 has 999 B, e1 exactly 1000 B. r1: len 1 -> 10 B.
  // Pool 1999 B: 1000 + 10 fits -> |R| = 2; Z = 1.05 x (101 + 0) / 2 = 53.025.
  std::vector<EngineLoad> des = {de(0, 0, 0, 999), de(1, 4, 0, 1000)};
  DeFetchResult r = de_phase2({req(0, 100), req(1, 1)}, des, 10.0);
  CHECK(r.feasible == 2);
  // r0: only e1 fits (over Z: 0 + 100 > 53.025) -> e1, 0 B left. r1: only e0 fits -> e0.
  CHECK(r.assignments == std::vector<DeAssignment>{{0, 1}, {1, 0}});
  CHECK(des[0].free_hbm == 989);
  CHECK(des[1].free_hbm == 0);
  CHECK(r.stop == DeStop::kQueueEmpty);
}

TEST_CASE("DE phase 2: empty private queue -> nothing taken, Z from the DEs alone", "[unit]") {
  std::vector<EngineLoad> des = {de(0, 0, 100, 0), de(1, 0, 300, 0)};
  DeFetchResult r = de_phase2({}, des, 1.0);
  CHECK(r.taken == 0);
  CHECK(r.feasible == 0);
  CHECK(r.stop == DeStop::kQueueEmpty);
  CHECK(r.z == Approx(1.05 * 200));
}

TEST_CASE("DE phase 2: random states -> never more than |R| taken, no DE's HBM goes negative", "[unit]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<EngineLoad> des;
    const int n = 1 + static_cast<int>(u(rng) * 4);
    for (int i = 0; i < n; ++i)
      des.push_back(de(i, static_cast<int>(u(rng) * 5), u(rng) * 1000, u(rng) * 2000));
    std::vector<RequestInfo> q;
    for (int i = 0; i < 12; ++i)
      q.push_back({static_cast<uint64_t>(i), u(rng) * 300, u(rng) * 50, u(rng) * 50});
    DeFetchResult r = de_phase2(q, des, 2.0);
    INFO("trial " << trial);
    CHECK(r.taken <= r.feasible);
    CHECK(r.taken == static_cast<int>(r.assignments.size()));
    CHECK((r.stop == DeStop::kQueueEmpty) == (r.taken == static_cast<int>(q.size())));
    for (const auto& e : des) CHECK(e.free_hbm >= 0);
  }
}

}  // namespace sim::policy::dualpath
