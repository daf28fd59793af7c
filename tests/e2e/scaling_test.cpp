// End-to-end checks of workload.append_scale / gen_scale (sim/workload/scaling.h) on the I/O-bound 1P1D
// (tests/e2e/cases/io_1p1d.json) with one agent replaying one_agent.jsonl: turns (append, gen) =
// (5000, 100), (2000, 100), (1000, 50), (500, 20), 8,770 tokens, which is the file's MaxLen (its longest
// trajectory). The summary's token counts are checked against hand computations.
#include <catch2/catch.hpp>

#include "tests/e2e/support.h"

namespace {

const std::string kScalingCase = e2e::case_file("io_1p1d.json");
const std::vector<std::string> kOne = {"workload.trace=one_agent.jsonl", "workload.agents=1"};

nlohmann::json run(std::vector<std::string> sets) {
  sets.insert(sets.begin(), kOne.begin(), kOne.end());
  return e2e::run_ok(kScalingCase, sets).at("summary");
}

}  // namespace

TEST_CASE("Scaling: x0.5 -> every append and gen halved, the hit is the halved context before each turn",
          "[e2e]") {
  const auto base = run({});
  CHECK(base.at("miss_tokens").get<double>() == 8500);  // 5000 + 2000 + 1000 + 500
  const auto s = run({"workload.append_scale=0.5", "workload.gen_scale=0.5"});
  CHECK(s.at("turns_total").get<int>() == 4);
  CHECK(s.at("miss_tokens").get<double>() == 4250);  // 2500 + 1000 + 500 + 250
  CHECK(s.at("gen_tokens").get<double>() == 135);    // 50 + 50 + 25 + 10
  // Hits: 0, 2550, 2550 + 1050 = 3600, 3600 + 525 = 4125.
  CHECK(s.at("hit_tokens").get<double>() == 10275);
  // Only the appends scaled: gen stays 270.
  const auto a = run({"workload.append_scale=0.5"});
  CHECK(a.at("miss_tokens").get<double>() == 4250);
  CHECK(a.at("gen_tokens").get<double>() == 270);
}

TEST_CASE("Scaling: x2 -> the trajectory is cut at the file's MaxLen", "[e2e]") {
  // (10000, 100) alone passes 8,770: cut to (8670, 100), and the next turn would pass MaxLen.
  const auto s = run({"workload.append_scale=2"});
  CHECK(s.at("turns_total").get<int>() == 1);
  CHECK(s.at("miss_tokens").get<double>() == 8670);
  CHECK(s.at("gen_tokens").get<double>() == 100);
  CHECK(s.at("hit_tokens").get<double>() == 0);
  // gen x 2: (5000, 200) -> 5200; (2000, 200) -> 7400; (1000, 100) -> 8500; (500, 40) -> 9040 > 8770.
  const auto g = run({"workload.gen_scale=2"});
  CHECK(g.at("turns_total").get<int>() == 3);
  CHECK(g.at("gen_tokens").get<double>() == 500);
  CHECK(g.at("miss_tokens").get<double>() == 8000);
}
