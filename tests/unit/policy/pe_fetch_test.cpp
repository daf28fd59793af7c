// DualPath PE scheduling (Algorithm 1) on hand-built engine states.
#include "sim/policy/dualpath/pe_fetch.h"

#include <catch2/catch.hpp>
#include <vector>

namespace sim::policy::dualpath {
namespace {

EngineLoad pe(int id, int node, double tok) {
  EngineLoad e;
  e.id = id;
  e.node = node;
  e.tok = tok;
  return e;
}

// `n` requests of `hit` + `miss` tokens each.
std::vector<RequestInfo> requests(int n, double hit, double miss) {
  std::vector<RequestInfo> q;
  for (int i = 0; i < n; ++i) q.push_back({static_cast<uint64_t>(i), hit, miss, 0});
  return q;
}

std::vector<double> toks(const std::vector<EngineLoad>& g) {
  std::vector<double> t;
  for (const auto& e : g) t.push_back(e.tok);
  return t;
}

}  // namespace

TEST_CASE("PE classify: engines around alpha and beta -> C1 over beta, else C2/C3 by the node's read_q",
          "[unit]") {
  const double alpha = 1000, beta = 100;
  const std::vector<double> read_q = {1000, 1001};  // node 0 exactly at alpha (short), node 1 over it
  const std::vector<EngineLoad> g = {pe(0, 0, 100), pe(1, 0, 101), pe(2, 1, 0), pe(3, 1, 150), pe(4, 0, 0)};
  CHECK(classify(g, read_q, alpha, beta) ==
        std::vector<PeClass>{PeClass::kC2ShortRead, PeClass::kC1Overloaded, PeClass::kC3LongRead,
                             PeClass::kC1Overloaded, PeClass::kC2ShortRead});
}

TEST_CASE("PE tokens: default tokens(r) -> hit + miss, not gen", "[unit]") {
  CHECK(pe_tokens({7, 30000, 400, 900}) == 30400);
}

TEST_CASE("PE fetch: mixed group -> C2 least tok first, then C3, stops when all are over beta", "[unit]") {
  // Node 0 has a short read queue, node 1 a long one. beta = 100, each request 40 tokens (30 hit + 10 miss).
  const std::vector<double> read_q = {10, 5000};
  std::vector<EngineLoad> g = {pe(0, 0, 50), pe(1, 0, 20), pe(2, 1, 0), pe(3, 0, 200)};
  PeFetchResult r = pe_fetch(requests(10, 30, 10), g, read_q, /*alpha=*/1000, /*beta=*/100);
  // e1 20->60, e0 50->90, e1 60->100 (= beta: still C2), e0 90->130 (now C1), e1 100->140 (now C1);
  // C2 is empty, so the C3 engine e2 (least tok all along, on the long-queue node) takes over:
  // 0->40->80->120; then every engine is over beta.
  CHECK(r.assignments ==
        std::vector<PeAssignment>{{0, 1}, {1, 0}, {2, 1}, {3, 0}, {4, 1}, {5, 2}, {6, 2}, {7, 2}});
  CHECK(r.taken == 8);
  CHECK(r.stop == PeStop::kNoEngine);
  CHECK(toks(g) == std::vector<double>{130, 140, 120, 200});
  CHECK(g[0].seq == 2);
  CHECK(g[1].seq == 3);
  CHECK(g[2].seq == 3);
  CHECK(g[3].seq == 0);  // C1 from the start: never chosen
}

TEST_CASE("PE fetch: C3 engine with the fewest tokens -> not chosen while C2 is non-empty", "[unit]") {
  std::vector<EngineLoad> g = {pe(0, 1, 0), pe(1, 0, 90)};
  PeFetchResult r = pe_fetch(requests(1, 0, 5), g, {0, 2000}, 1000, 100);
  CHECK(r.assignments == std::vector<PeAssignment>{{0, 1}});
  CHECK(r.stop == PeStop::kQueueEmpty);
}

TEST_CASE("PE fetch: engine passes beta mid-fetch -> moves to C1 and the fetch ends", "[unit]") {
  std::vector<EngineLoad> g = {pe(4, 0, 90)};
  PeFetchResult r = pe_fetch(requests(3, 15, 5), g, {0}, 1000, 100);
  CHECK(r.taken == 1);  // 90 <= beta before it: eligible; 110 after it: overloaded
  CHECK(r.assignments == std::vector<PeAssignment>{{0, 4}});
  CHECK(r.stop == PeStop::kNoEngine);
  CHECK(g[0].tok == 110);
}

TEST_CASE("PE fetch: every engine over beta -> takes nothing, stops for lack of an engine", "[unit]") {
  std::vector<EngineLoad> g = {pe(0, 0, 101), pe(1, 1, 500)};
  PeFetchResult r = pe_fetch(requests(2, 1, 1), g, {0, 0}, 1000, 100);
  CHECK(r.taken == 0);
  CHECK(r.assignments.empty());
  CHECK(r.stop == PeStop::kNoEngine);
  CHECK(toks(g) == std::vector<double>{101, 500});
}

TEST_CASE("PE fetch: queue shorter than the group's room -> takes all, stops on the empty queue", "[unit]") {
  std::vector<EngineLoad> g = {pe(0, 0, 0), pe(1, 0, 0)};
  PeFetchResult r = pe_fetch(requests(3, 2, 1), g, {0}, 1000, 100);
  CHECK(r.taken == 3);
  CHECK(r.stop == PeStop::kQueueEmpty);
  CHECK(r.assignments == std::vector<PeAssignment>{{0, 0}, {1, 1}, {2, 0}});
  PeFetchResult none = pe_fetch({}, g, {0}, 1000, 100);
  CHECK(none.taken == 0);
  CHECK(none.stop == PeStop::kQueueEmpty);
}

TEST_CASE("PE fetch: equal tok -> the lowest engine id, whatever the order in the group", "[unit]") {
  std::vector<EngineLoad> g = {pe(7, 0, 10), pe(3, 0, 10), pe(5, 0, 10)};
  PeFetchResult r = pe_fetch(requests(3, 0, 1), g, {0}, 1000, 100);
  CHECK(r.assignments == std::vector<PeAssignment>{{0, 3}, {1, 5}, {2, 7}});
}

TEST_CASE("PE fetch: read_q over alpha -> C3 for the whole fetch, as read_q is not updated", "[unit]") {
  // Only C3 engines: they keep receiving (in least-tok order) until they pass beta.
  std::vector<EngineLoad> g = {pe(0, 0, 0), pe(1, 0, 30)};
  const std::vector<double> read_q = {5000};
  PeFetchResult r = pe_fetch(requests(5, 20, 20), g, read_q, 1000, 100);
  // e0 0->40, e1 30->70, e0 40->80, e1 70->110 (C1), e0 80->120 (C1); all five taken.
  CHECK(r.assignments == std::vector<PeAssignment>{{0, 0}, {1, 1}, {2, 0}, {3, 1}, {4, 0}});
  CHECK(r.stop == PeStop::kQueueEmpty);
  CHECK(read_q == std::vector<double>{5000});
}

TEST_CASE("PE fetch: custom tokens(r) -> tok grows by what it returns", "[unit]") {
  std::vector<EngineLoad> g = {pe(0, 0, 0), pe(1, 0, 15)};
  auto miss_only = [](const RequestInfo& r) { return r.miss_tokens; };
  PeFetchResult r = pe_fetch(requests(2, 1000, 10), g, {0}, 1000, 100, -1, miss_only);
  CHECK(r.assignments == std::vector<PeAssignment>{{0, 0}, {1, 0}});  // 0->10, then 10 < 15
  CHECK(toks(g) == std::vector<double>{20, 15});
}

TEST_CASE("PE fetch: idle engines on three nodes -> requests go node by node, not lowest ids first",
          "[unit]") {
  // One group spanning three nodes (two engines each), every engine idle, equal read queues. Least tok_e
  // alone ties everywhere; the lowest-id rule would give engines 0 and 1 (node 0) the first two requests
  // and leave node 2 without any of four.
  std::vector<EngineLoad> g = {pe(0, 0, 0), pe(1, 0, 0), pe(2, 1, 0), pe(3, 1, 0), pe(4, 2, 0), pe(5, 2, 0)};
  PeFetchResult r = pe_fetch(requests(6, 100, 10), g, {0, 0, 0}, 1000, 1e9);
  // One request per node first (the node holding fewer tokens wins the tie); then every node holds as
  // many tokens, and the cyclic order after the last pick (engine 4) goes on: 5, 1, 3.
  CHECK(r.assignments == std::vector<PeAssignment>{{0, 0}, {1, 2}, {2, 4}, {3, 5}, {4, 1}, {5, 3}});
  CHECK(r.last_engine == 3);
}

TEST_CASE("PE fetch: equal tok on two short-queue nodes -> the node with the shorter read_q", "[unit]") {
  std::vector<EngineLoad> g = {pe(0, 0, 50), pe(1, 1, 50)};
  PeFetchResult r = pe_fetch(requests(1, 10, 1), g, {300, 200}, 1000, 1e9);
  CHECK(r.assignments == std::vector<PeAssignment>{{0, 1}});
}

TEST_CASE("PE fetch: one request per fetch on an idle group -> the pick rotates over the engines", "[unit]") {
  // Each fetch sees every engine idle again (the previous request finished in between), as at light
  // load. The previous fetch's last pick is `after`: the picks go round, node by node, instead of
  // engine 0 taking every request.
  const std::vector<double> read_q = {0, 0};
  int after = -1;
  std::vector<int> picks;
  for (int f = 0; f < 5; ++f) {
    std::vector<EngineLoad> g = {pe(0, 0, 0), pe(1, 0, 0), pe(2, 1, 0), pe(3, 1, 0)};
    PeFetchResult r = pe_fetch(requests(1, 100, 10), g, read_q, 1000, 1e9, after);
    REQUIRE(r.taken == 1);
    picks.push_back(r.assignments[0].engine);
    after = r.last_engine;
  }
  CHECK(picks == std::vector<int>{0, 1, 2, 3, 0});
  // An empty fetch leaves `after` as it was.
  std::vector<EngineLoad> g = {pe(0, 0, 0)};
  CHECK(pe_fetch({}, g, {0}, 1000, 1e9, 3).last_engine == 3);
}

}  // namespace sim::policy::dualpath
