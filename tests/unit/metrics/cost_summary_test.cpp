// summary.cost (sim/metrics/results.h): the cluster's price over the run, per token and per agent task.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/metrics/results.h"

using sim::metrics::cost_summary;
using sim::metrics::CostInputs;

namespace {

// 1P1D at 2.5 per node-hour for 1,800 s; 3 agents of 4 turns each, 6 turns done with 3M tokens, 0.5M
// of them generated.
CostInputs half_hour_run() {
  CostInputs in;
  in.per_node_hour = 2.5;
  in.nodes = 2;
  in.duration_s = 1800;
  in.tokens = 3e6;
  in.gen_tokens = 0.5e6;
  in.turns_completed = 6;
  in.turns_total = 12;
  in.agents = 3;
  return in;
}

}  // namespace

TEST_CASE("Cost: no price -> summary.cost is null, whatever the run did", "[unit]") {
  CostInputs in = half_hour_run();
  in.per_node_hour.reset();
  CHECK(cost_summary(in).is_null());
}

TEST_CASE("Cost: a priced half-hour run -> cluster and run cost, per million tokens, per agent task",
          "[unit]") {
  const nlohmann::json c = cost_summary(half_hour_run());
  REQUIRE(c.is_object());
  CHECK(c.at("per_node_hour") == 2.5);
  CHECK(c.at("nodes") == 2);
  CHECK(c.at("cluster_per_hour") == 5.0);
  CHECK(c.at("run_cost").get<double>() == Approx(2.5));  // 5 per hour for half an hour
  CHECK(c.at("per_million_tokens").get<double>() == Approx(2.5 / 3));
  CHECK(c.at("per_million_gen_tokens").get<double>() == Approx(5.0));
  // 6 of the 12 turns of 3 agents = 1.5 whole trajectories of 4 turns.
  CHECK(c.at("per_agent_task").get<double>() == Approx(2.5 / 1.5));
  CHECK(c.size() == 7);  // no other keys
}

TEST_CASE("Cost: a zero denominator -> that ratio is null, not 0 or infinity", "[unit]") {
  CostInputs none = half_hour_run();
  none.duration_s = 0;  // nothing completed
  none.tokens = 0;
  none.gen_tokens = 0;
  none.turns_completed = 0;
  const nlohmann::json c = cost_summary(none);
  REQUIRE(c.is_object());
  CHECK(c.at("run_cost") == 0.0);
  CHECK(c.at("per_million_tokens").is_null());
  CHECK(c.at("per_million_gen_tokens").is_null());
  CHECK(c.at("per_agent_task").is_null());

  CostInputs empty = half_hour_run();  // an empty workload
  empty.turns_total = 0;
  empty.agents = 0;
  CHECK(cost_summary(empty).at("per_agent_task").is_null());
  CHECK(cost_summary(empty).at("per_million_tokens").get<double>() == Approx(2.5 / 3));
}

TEST_CASE("Cost: a price of 0 -> every cost 0, still reported", "[unit]") {
  CostInputs in = half_hour_run();
  in.per_node_hour = 0.0;
  const nlohmann::json c = cost_summary(in);
  REQUIRE(c.is_object());
  CHECK(c.at("run_cost") == 0.0);
  CHECK(c.at("per_million_tokens") == 0.0);
  CHECK(c.at("per_agent_task") == 0.0);
}
