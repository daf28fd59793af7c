// Read-path policies on hand-built views.
#include <catch2/catch.hpp>

#include "sim/policy/registry.h"

namespace {

using namespace sim::policy;

ClusterView two_nodes(double q_pe, double q_de) {
  ClusterView v;
  v.pes = {{0, 0, 0, 0, 0}};
  v.des = {{0, 1, 0, 0, 0}};
  v.read_q = {q_pe, q_de};
  return v;
}

ReadDecision decide(const std::string& name, double q_pe, double q_de, double hit = 1000) {
  auto p = make_read_path(name);
  REQUIRE(p.is_ok());
  const ClusterView v = two_nodes(q_pe, q_de);
  return (*p)->choose({1, hit, 100, 10}, v.pes[0], v.des[0], v);
}

}  // namespace

TEST_CASE("ReadPath pe: any queues -> everything through the PE node", "[unit]") {
  CHECK(decide("pe", 0, 1e9).pe_fraction == 1.0);
  CHECK(decide("pe", 1e9, 0).pe_fraction == 1.0);
  CHECK_FALSE(decide("pe", 0, 0).zero_cost);
}

TEST_CASE("ReadPath de: any queues -> everything through the DE node", "[unit]") {
  CHECK(decide("de", 0, 1e9).pe_fraction == 0.0);
  CHECK(decide("de", 1e9, 0).pe_fraction == 0.0);
}

TEST_CASE("ReadPath dualpath: the shorter read queue wins, a tie goes to the PE", "[unit]") {
  CHECK(decide("dualpath", 10, 20).pe_fraction == 1.0);
  CHECK(decide("dualpath", 20, 10).pe_fraction == 0.0);
  CHECK(decide("dualpath", 5, 5).pe_fraction == 1.0);
}

TEST_CASE("ReadPath dualpath: with DRAM tiers, the side that reads less from storage after its queue wins",
          "[unit]") {
  auto p = make_read_path("dualpath");
  REQUIRE(p.is_ok());
  auto choose = [&](double q_pe, double q_de, double pe_cached, double de_cached) {
    const ClusterView v = two_nodes(q_pe, q_de);
    RequestInfo r{1, 1000, 100, 10};
    r.pe_cached_tokens = pe_cached;
    r.de_cached_tokens = de_cached;
    return (*p)->choose(r, v.pes[0], v.des[0], v).pe_fraction;
  };
  // Equal queues: the side whose node holds 600 of the 1,000 hit tokens (reads 400, not 1,000).
  CHECK(choose(0, 0, 0, 600) == 0.0);
  CHECK(choose(0, 0, 600, 0) == 1.0);
  // The DE queue 500 tokens longer: 500 + 400 = 900 < 1,000 through the PE; at 700 longer, 1,100 > 1,000.
  CHECK(choose(0, 500, 0, 600) == 0.0);
  CHECK(choose(0, 700, 0, 600) == 1.0);
  // Both cached alike: the queues decide, as without tiers.
  CHECK(choose(10, 20, 300, 300) == 1.0);
  CHECK(choose(20, 10, 300, 300) == 0.0);
}

TEST_CASE("ReadPath split: shares even out the two queues", "[unit]") {
  // Equal queues: half each. PE queue 1000 tokens longer with 1000 hit tokens: all to the DE.
  CHECK(decide("split", 0, 0, 1000).pe_fraction == Approx(0.5));
  CHECK(decide("split", 1000, 0, 1000).pe_fraction == Approx(0.0));
  CHECK(decide("split", 0, 1000, 1000).pe_fraction == Approx(1.0));
  // PE queue 500 longer: f = (0 - 500 + 1000) / 2000 = 0.25; both queues end at 750.
  const double f = decide("split", 500, 0, 1000).pe_fraction;
  CHECK(f == Approx(0.25));
  CHECK(500 + f * 1000 == Approx(0 + (1 - f) * 1000));
}

TEST_CASE("ReadPath alternate: the DE side for D/(P + D) of the requests, spread out, blind to the queues",
          "[unit]") {
  auto p = make_read_path("alternate");
  REQUIRE(p.is_ok());
  // 2 prefill nodes (4 engines: two GPUs each) and 4 decode nodes: the DE side for 4/6 of the requests, a
  // request going to the DE when the share owed reaches one (2/3: PE; 4/3: DE; 1: DE; 2/3: PE ...), whatever
  // the queues. A share by engines (4 of 8) or a queue-aware choice would fail the counts.
  ClusterView v;
  v.pes = {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 1, 0, 0, 0}};
  for (int n = 2; n < 6; ++n) v.des.push_back({0, n, 0, 0, 0});
  v.read_q = {0, 1e9, 0, 0, 0, 0};  // node 1's queue full: ignored
  std::string sides;
  int de = 0;
  for (int i = 0; i < 600; ++i) {
    const double f =
        (*p)->choose({static_cast<uint64_t>(i), 1000, 100, 10}, v.pes[i % 4], v.des[i % 4], v).pe_fraction;
    REQUIRE((f == 0.0 || f == 1.0));
    if (i < 6) sides += f == 0.0 ? 'D' : 'P';
    de += f == 0.0;
    CHECK(std::abs(de - (i + 1) * 2.0 / 3) < 1);  // never more than one request off the share
  }
  CHECK(sides == "PDDPDD");
  CHECK(de == 400);
  // A role change (one decode node fewer: 3 of 5) recounts the share.
  v.des.pop_back();
  int de_after = 0;
  for (int i = 0; i < 500; ++i)
    de_after += (*p)->choose({0, 1000, 100, 10}, v.pes[0], v.des[0], v).pe_fraction == 0.0;
  CHECK(de_after == Approx(300).margin(1));
}

TEST_CASE("ReadPath oracle: transfers are free", "[unit]") {
  CHECK(decide("oracle", 0, 0).zero_cost);
}

TEST_CASE("ReadPath registry: an unknown name -> error listing the valid names", "[unit]") {
  auto p = make_read_path("nope");
  REQUIRE_FALSE(p.is_ok());
  CHECK_THAT(p.status().message(), Catch::Contains("nope") && Catch::Contains("dualpath"));
}
