// summary.cost of `dpsim run` against hand computations from the run's own summary: the price comes from
// the hardware file (cost.per_node_hour), the node count from the resolved scenario, the duration from
// summary.jct_s and the tokens from the token counts, each read independently of sim/metrics.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/e2e/support.h"

namespace {

constexpr double kPrice = 2.5;  // per node-hour, any currency

// Writes a copy of the hardware file `hw_path` with cost.per_node_hour = price into `dir`; returns its path.
std::string priced_copy(const e2e::Scratch& dir, const std::string& hw_path, double price) {
  nlohmann::json hw = e2e::read_json(hw_path);
  REQUIRE_FALSE(hw.contains("cost"));  // the fixture and the shipped files carry no price
  hw["cost"] = {{"per_node_hour", price}};
  const std::string out = (dir.dir / "priced-hw.json").string();
  std::ofstream(out) << hw.dump(2);
  return out;
}

double cost_num(const nlohmann::json& j, const char* key) {
  return j.at(key).get<double>();
}

int nodes_of(const nlohmann::json& result) {
  const auto& c = result.at("scenario").at("cluster");
  return c.at("prefill_nodes").get<int>() + c.at("decode_nodes").get<int>();
}

}  // namespace

TEST_CASE("Cost: no price in the hardware file -> summary.cost is null", "[e2e]") {
  const auto r = e2e::run_ok(e2e::case_file("io_1p1d.json"));
  const auto& s = r.at("summary");
  REQUIRE(s.contains("cost"));
  CHECK(s.at("cost").is_null());
}

TEST_CASE("Cost: 1P1D, 16 agents at 2.5 per node-hour -> summary.cost from the run's JCT, tokens and nodes",
          "[e2e]") {
  e2e::Scratch dir;
  REQUIRE_FALSE(dir.dir.empty());
  const std::string hw = priced_copy(dir, e2e::case_file("e2e-io-hw.json"), kPrice);
  const auto r = e2e::run_ok(e2e::case_file("io_1p1d.json"),
                             {"hardware=" + hw, "workload.trace=sixteen_agents.jsonl", "workload.agents=16"});
  REQUIRE(r.at("complete").get<bool>());
  const auto& s = r.at("summary");
  const auto& c = s.at("cost");
  REQUIRE(c.is_object());

  // 1P1D: 2 nodes, 5 per hour.
  REQUIRE(nodes_of(r) == 2);
  CHECK(cost_num(c, "per_node_hour") == kPrice);
  CHECK(c.at("nodes").get<int>() == 2);
  CHECK(cost_num(c, "cluster_per_hour") == 5.0);
  // Over the JCT, the duration the throughputs use.
  const double jct = cost_num(s, "jct_s");
  REQUIRE(jct > 0);
  const double run_cost = 5.0 * jct / 3600;
  CHECK(cost_num(c, "run_cost") == Approx(run_cost).epsilon(1e-12));
  // A complete run: the completed turns' tokens are the workload's.
  const double tokens = cost_num(s, "hit_tokens") + cost_num(s, "miss_tokens") + cost_num(s, "gen_tokens");
  const double gen = cost_num(s, "gen_tokens");
  REQUIRE(gen > 0);
  CHECK(cost_num(c, "per_million_tokens") == Approx(run_cost / (tokens / 1e6)).epsilon(1e-12));
  CHECK(cost_num(c, "per_million_gen_tokens") == Approx(run_cost / (gen / 1e6)).epsilon(1e-12));
  // Every agent finished its trajectory: 16 tasks.
  REQUIRE(s.at("agents").get<int>() == 16);
  CHECK(cost_num(c, "per_agent_task") == Approx(run_cost / 16).epsilon(1e-12));
  // The same tokens, through the throughput fields (tokens/s over the JCT).
  CHECK(cost_num(s, "prompt_tokens_per_s") * jct + cost_num(s, "gen_tokens_per_s") * jct ==
        Approx(tokens).epsilon(1e-9));
}

TEST_CASE("Cost: an online run stopped by its time limit -> costs over the turns it completed", "[e2e]") {
  e2e::Scratch dir;
  REQUIRE_FALSE(dir.dir.empty());
  const std::string hw = priced_copy(dir, e2e::repo_file("models/hardware/hopper-8x400g.json"), kPrice);
  const auto run = e2e::run_dpsim(e2e::case_file("online_1p1d.json"),
                                  {"hardware=" + hw, "workload.aps=0.5", "sim.time_limit_s=20"});
  REQUIRE(run.exit_code == 0);
  const auto& r = run.result;
  const auto& s = r.at("summary");
  REQUIRE(s.at("stopped_by") == "time_limit");
  REQUIRE_FALSE(r.at("complete").get<bool>());
  const double done = cost_num(s, "turns_completed"), total = cost_num(s, "turns_total"),
               agents = cost_num(s, "agents");
  REQUIRE(done > 0);
  REQUIRE(done < total);
  const auto& c = s.at("cost");
  REQUIRE(c.is_object());

  REQUIRE(nodes_of(r) == 2);
  const double jct = cost_num(s, "jct_s");  // the last completed turn, before the 20 s limit
  REQUIRE(jct > 0);
  REQUIRE(jct <= 20);
  const double run_cost = 5.0 * jct / 3600;
  CHECK(cost_num(c, "run_cost") == Approx(run_cost).epsilon(1e-12));
  // The completed turns' tokens: the throughputs times the JCT (summary.hit_tokens etc. are the workload's).
  const double prompt = cost_num(s, "prompt_tokens_per_s") * jct, gen = cost_num(s, "gen_tokens_per_s") * jct;
  REQUIRE(gen > 0);
  CHECK(cost_num(c, "per_million_tokens") == Approx(run_cost / ((prompt + gen) / 1e6)).epsilon(1e-9));
  CHECK(cost_num(c, "per_million_gen_tokens") == Approx(run_cost / (gen / 1e6)).epsilon(1e-9));
  // Agent tasks done: the completed turns over the mean turns of one trajectory.
  const double tasks = done / (total / agents);
  CHECK(tasks < agents);
  CHECK(cost_num(c, "per_agent_task") == Approx(run_cost / tasks).epsilon(1e-12));
}
