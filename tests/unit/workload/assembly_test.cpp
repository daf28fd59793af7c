// workload::build_workload: the turns a run simulates, from a scenario file, without SimGrid.
#include "sim/workload/assembly.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

sim::config::ScenarioConfig load_repo_scenario(const std::string& relative,
                                               const std::vector<std::string>& sets = {}) {
  auto sc = sim::config::load_scenario(std::string(DPSIM_SOURCE_DIR) + "/" + relative, sets);
  INFO((sc ? std::string() : sc.status().message()));
  REQUIRE(sc);
  return *sc;
}

}  // namespace

// tests/bad_inputs/files/over_context.jsonl on DS 660B (max_context_tokens 163,840): "short" is one turn of
// 1,000 + 10 tokens; "long" is 100,000 + 100 (context 100,100: fits) then 70,000 + 100 (context 170,200:
// over the window).
TEST_CASE("build_workload: a turn over the model's context is dropped and counted, or an error naming it") {
  SECTION("drop: the long trajectory ends before its second turn") {
    const auto sc =
        load_repo_scenario("tests/bad_inputs/trace_over_context.json", {"workload.over_context=drop"});
    auto w = sim::workload::build_workload(sc);
    REQUIRE(w);
    CHECK(w->dropped_turns == 1);
    CHECK(w->totals.agents == 2);
    CHECK(w->totals.turns == 2);
    CHECK(w->totals.miss_tokens == 1000 + 100000);
    CHECK(w->totals.gen_tokens == 10 + 100);
    CHECK(w->totals.hit_tokens == 0);
    CHECK(w->replay.empty());
  }
  SECTION("error: the trajectory, the turn and the tokens") {
    const auto sc = load_repo_scenario("tests/bad_inputs/trace_over_context.json");
    auto w = sim::workload::build_workload(sc);
    REQUIRE_FALSE(w);
    const std::string m = w.status().message();
    CHECK_THAT(m, Catch::Contains("workload.trace"));
    CHECK_THAT(m, Catch::Contains("trajectory \"long\", turn 1"));
    CHECK_THAT(m, Catch::Contains("170200 tokens"));
    CHECK_THAT(m, Catch::Contains("max_context_tokens 163840"));
  }
}

// The Mooncake excerpt replayed: every line is one request; the totals are recounted here from the file
// itself (input = hit + miss, output = gen, hit capped at input - 1 so that one token is computed).
TEST_CASE("build_workload: a replayed trace's requests and token totals match the file's") {
  const auto sc = load_repo_scenario("tests/e2e/cases/replay_1p1d.json");
  auto w = sim::workload::build_workload(sc);
  REQUIRE(w);
  std::ifstream in(std::string(DPSIM_SOURCE_DIR) + "/tests/e2e/cases/mooncake_excerpt.jsonl");
  int64_t lines = 0, input = 0, output = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    lines++;
    input += j.at("input_length").get<int64_t>();
    output += std::max<int64_t>(1, j.at("output_length").get<int64_t>());
  }
  REQUIRE(lines == 40);
  CHECK(w->totals.turns == lines);
  CHECK(w->totals.hit_tokens + w->totals.miss_tokens == input);
  CHECK(w->totals.gen_tokens == output);
  CHECK(w->totals.hit_tokens > 0);  // later turns of a conversation reuse earlier blocks
  size_t turns = 0;
  for (const auto& s : w->replay) turns += s.size();
  CHECK(static_cast<int64_t>(turns) == lines);
  CHECK(w->agents.empty());
}
