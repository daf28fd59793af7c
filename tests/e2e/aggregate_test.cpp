// Aggregated transfers end to end (sim/README.md, "Aggregated transfers"): a decode GPU's loader copies the
// requests waiting for it into HBM as one transfer. tests/e2e/cases/handoff_4p4d.json offers 4,000 one-turn
// requests (2,048-token prompts, no cache, 2 output tokens) at once to 4P4D, so whole passes of prompts reach
// each decode GPU together.
//
// By hand, per decode node (round robin: 1,000 requests on each of the 4): every byte of a prompt's KV (2,048
// tokens x 70,272 B) crosses the node's DRAM three times (the PE's push into the DE buffer, the copy into
// HBM, the appended tokens' persistence to storage), and the first generated token's KV twice (D2H into the
// buffer, then to storage; the second token is the last and is persisted with it): 3 x 1,000 x 2,048 x 70,272
// + 2 x 1,000 x 2 x 70,272 = 432,032,256,000 B. A loader that counted an aggregate's bytes once per request,
// or dropped those of the requests it released early, would be off by whole prompts.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

const std::string kHandoffCase = e2e::case_file("handoff_4p4d.json");

}  // namespace

TEST_CASE("Aggregates: a decode node's DRAM carries the loaders' copies by hand, and one comm carries many",
          "[e2e]") {
  const nlohmann::json r = e2e::run_ok(kHandoffCase);
  e2e::check_invariants(r);
  const double turns = r.at("summary").at("turns_completed").get<double>();
  REQUIRE(turns == 4000);
  REQUIRE(r.at("summary").at("kv_bytes_per_token").get<double>() == 70272);
  const double by_hand = 3.0 * 1000 * 2048 * 70272 + 2.0 * 1000 * 2 * 70272;
  int decode_nodes = 0;
  for (const auto& e : r.at("resources").at("dram")) {
    if (e.at("role") != "decode") continue;
    decode_nodes++;
    INFO("decode node " << e.at("node"));
    CHECK(e.at("bytes").get<double>() == Approx(by_hand).epsilon(1e-9));
  }
  CHECK(decode_nodes == 4);
  // Each turn needs a copy into HBM and its share of pass transfers; with the loaders' copies aggregated the
  // run makes fewer transfers than turns, and the loaders released the requests of an aggregate one by one.
  const auto& ri = r.at("run_info");
  CHECK(ri.at("transfers").get<double>() < turns);
  CHECK(ri.at("transfer_polls").get<double>() > 0);
}

TEST_CASE("Aggregates: the same seed gives the same bytes on every link and the same results", "[e2e]") {
  const nlohmann::json a = e2e::run_ok(kHandoffCase), b = e2e::run_ok(kHandoffCase);
  CHECK(a.at("run_info").at("transfers") == b.at("run_info").at("transfers"));
  CHECK(a.at("resources").dump() == b.at("resources").dump());
  CHECK(e2e::without_run_info(a).dump() == e2e::without_run_info(b).dump());
}
