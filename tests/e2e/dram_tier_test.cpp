// End-to-end checks of cache.dram_bytes (a KV tier in each node's DRAM) on the I/O-bound 1P1D
// (tests/e2e/cases/io_1p1d.json: node 0 prefill, node 1 decode, 1 MB of KV per token) with one agent
// replaying one_agent.jsonl: turns (append, gen) = (5000, 100), (2000, 100), (1000, 50), (500, 20), so the
// hits are 0, 5,100, 7,200 and 8,250 tokens (20,550). At a turn's end the DE node's tier keeps the whole
// context (hit + miss + gen) and the PE node's keeps the hit when the PE side read all of it. Worked by
// hand, the tokens read from storage (through the SNIC of the side that reads):
//   pe (Basic), room for all: 0, 5,100 (PE tier empty), 7,200 - 5,100, 8,250 - 7,200 -> 8,250
//   pe, 6,000 tokens per node (64-token blocks): the PE tier keeps 5,952 of 7,200 -> 0 + 5,100 + 2,100 +
//     (8,250 - 5,952) = 9,498
//   de, room for all: the DE tier holds each whole context -> 0
//   de, 6,000 per node: 0 + 0 + (7,200 - 5,952) + (8,250 - 5,952) = 3,546
//   dualpath: equal (empty) queues, the DE side holds more -> the de figures; without the tier -> 20,550
#include <catch2/catch.hpp>

#include "tests/e2e/support.h"

namespace {

const std::string kDramTierCase = e2e::case_file("io_1p1d.json");

double snic_in(const nlohmann::json& j, int node) {
  for (const auto& e : j.at("resources").at("snic"))
    if (e.at("node") == node && e.at("direction") == "in") return e.at("bytes").get<double>();
  FAIL("no snic " << node);
  return 0;
}

nlohmann::json run_dram_tier(const std::string& read_path, const std::string& dram_bytes) {
  return e2e::run_ok(kDramTierCase, {"policy.read_path=" + read_path, "cache.dram_bytes=" + dram_bytes});
}

}  // namespace

TEST_CASE("DRAM tier: Basic reads through the PE node only what its tier lacks", "[e2e]") {
  const auto all = run_dram_tier("pe", "1e12");
  CHECK(snic_in(all, 0) == Approx(8250e6));
  CHECK(snic_in(all, 1) == 0);
  const auto& t = all.at("summary").at("dram_tier");
  CHECK(t.at("snic_bytes_saved").get<double>() == Approx(12300e6));  // 20,550 - 8,250
  CHECK(t.at("hit_rate").get<double>() == Approx(12300.0 / 20550));
  CHECK(t.at("evicted_bytes").get<double>() == 0);
  const auto small = run_dram_tier("pe", "6e9");
  CHECK(snic_in(small, 0) == Approx(9498e6));
  // Evicted: the PE tier 1,248 + 2,298; the DE tier 1,248 + 2,298 + 2,818.
  CHECK(small.at("summary").at("dram_tier").at("evicted_bytes").get<double>() == Approx(9910e6));
  // Every hit token still reaches the PE GPU (from DRAM); storage was asked for less.
  CHECK(small.at("invariants").at("hit_bytes_loaded_to_pe").get<double>() == Approx(20550e6));
}

TEST_CASE("DRAM tier: the DE read path finds the whole context in the DE node's DRAM", "[e2e]") {
  CHECK(snic_in(run_dram_tier("de", "1e12"), 1) == 0);
  CHECK(snic_in(run_dram_tier("de", "6e9"), 1) == Approx(3546e6));
}

TEST_CASE("DRAM tier: dualpath prefers the side that holds the prefix", "[e2e]") {
  const auto tier = run_dram_tier("dualpath", "1e12");
  CHECK(snic_in(tier, 0) == 0);
  CHECK(snic_in(tier, 1) == 0);
  CHECK(tier.at("summary").at("dram_tier").at("hit_rate").get<double>() == 1.0);
  CHECK(snic_in(run_dram_tier("dualpath", "6e9"), 1) == Approx(3546e6));
  // Without a tier the queues tie at every turn and the PE side reads everything.
  const auto none = e2e::run_ok(kDramTierCase, {"policy.read_path=dualpath"});
  CHECK(snic_in(none, 0) == Approx(20550e6));
  CHECK(none.at("summary").at("dram_tier").is_null());
}
