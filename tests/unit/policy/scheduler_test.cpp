// Placement policies on hand-built views.
#include <catch2/catch.hpp>

#include "sim/policy/registry.h"

namespace {

using namespace sim::policy;

ClusterView view_with(std::vector<double> pe_tok, std::vector<double> de_tok) {
  ClusterView v;
  for (size_t i = 0; i < pe_tok.size(); ++i) v.pes.push_back({static_cast<int>(i), 0, 0, pe_tok[i], 0});
  for (size_t i = 0; i < de_tok.size(); ++i) v.des.push_back({static_cast<int>(i), 1, 0, de_tok[i], 0});
  v.read_q = {0, 0};
  return v;
}

}  // namespace

TEST_CASE("Scheduler round_robin: PEs and DEs in turn -> wraps around each independently", "[unit]") {
  auto s = make_scheduler("round_robin");
  REQUIRE(s.is_ok());
  const ClusterView v = view_with({0, 0}, {0, 0, 0});
  std::vector<std::pair<int, int>> got;
  for (int i = 0; i < 4; ++i) {
    Placement p = (*s)->place({}, v);
    got.emplace_back(p.pe, p.de);
  }
  CHECK(got == std::vector<std::pair<int, int>>{{0, 0}, {1, 1}, {0, 2}, {1, 0}});
}

TEST_CASE("Scheduler least_tokens: the fewest unfinished tokens -> ties to the lower id", "[unit]") {
  auto s = make_scheduler("least_tokens");
  REQUIRE(s.is_ok());
  Placement p = (*s)->place({}, view_with({30, 10, 10}, {5, 7, 1}));
  CHECK(p.pe == 1);
  CHECK(p.de == 2);
}

TEST_CASE("Scheduler dualpath: fetches on an idle group -> engine 0 first, then in turn across fetches",
          "[unit]") {
  auto s = make_scheduler("dualpath");
  REQUIRE(s.is_ok());
  SchedulerContext ctx;
  ctx.alpha_tokens = 1e9;
  ctx.beta_tokens = 1e9;
  ctx.kv_bytes_per_token = 1;
  (*s)->configure(ctx);
  const ClusterView v = view_with({0, 0, 0}, {0});
  const std::vector<int> group = {0, 1, 2};
  std::vector<int> picks;
  for (int f = 0; f < 4; ++f) {  // every fetch sees the same idle view: the rotation is the policy's own
    const Assignments a = (*s)->fetch_pe({RequestInfo{0, 100, 10, 1}}, group, v);
    REQUIRE(a.size() == 1);
    picks.push_back(a[0].second);
  }
  CHECK(picks == std::vector<int>{0, 1, 2, 0});
}
