// End-to-end checks of control.autoscale (control/autoscaler.h) on online_1p1d.json made 1P3D: DS 27B
// agents arriving at 20 per second overload the one prefill node (mean TTFT about 0.35 s against a bound of
// 0.2 s) while decode steps take about 1.4 ms (TPOT bound 50 ms): the "slo" policy converts decode nodes to
// prefill nodes, one at a time, each after its drain. The per-turn records (placement at issue: round_robin)
// show where every turn went.
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/e2e/support.h"

namespace {

const std::string kAutoscaleCase = e2e::case_file("online_1p1d.json");
const std::vector<std::string> kOverloaded = {"cluster.decode_nodes=3", "workload.aps=20", "slo.ttft_s=0.2",
                                              "control.autoscale.interval_s=2",
                                              "control.autoscale.min_interval_s=5"};

}  // namespace

TEST_CASE(
    "Autoscale: prefill over its TTFT bound, decode relaxed -> decode nodes become prefill nodes, "
    "one drain at a time",
    "[e2e]") {
  e2e::Scratch tmp;
  const std::string records = (tmp.dir / "r.csv").string();
  auto sets = kOverloaded;
  sets.push_back("control.autoscale.policy=slo");
  sets.push_back("outputs.requests=" + records);
  const auto j = e2e::run_ok(kAutoscaleCase, sets);
  const auto& as = j.at("summary").at("autoscale");
  const auto& actions = as.at("actions");
  REQUIRE(actions.size() >= 1);
  double prev_start = -1, prev_switch = -1;
  for (const auto& a : actions) {
    const double t = a.at("t_s").get<double>();
    CHECK(std::fmod(t, 2.0) == Approx(0).margin(1e-9));  // on a tick
    CHECK(a.at("from") == "decode");
    CHECK(a.at("to") == "prefill");
    CHECK(a.at("ttft_s").get<double>() > 0.2);
    CHECK(a.at("tpot_s").get<double>() < 0.5 * 0.05);
    REQUIRE(a.at("switched_at_s").is_number());
    if (prev_start >= 0) {
      CHECK(t - prev_start >= 5 - 1e-9);  // min_interval_s
      CHECK(t >= prev_switch);            // never while another drains
    }
    prev_start = t;
    prev_switch = a.at("switched_at_s").get<double>();
  }
  // Never the last node of a role.
  CHECK(j.at("summary").at("roles").at("decode_nodes_end").get<int>() >= 1);
  CHECK(j.at("summary").at("roles").at("prefill_nodes_end") == 1 + static_cast<int>(actions.size()));
  // The records: no turn is placed on a converted node's DEs after its drain began, and turns are
  // prefilled on it only after it switched (and some are).
  const auto rows = e2e::read_csv(records);
  REQUIRE(rows[0][2] == "issue_s");
  REQUIRE(rows[0][17] == "pe_node");
  REQUIRE(rows[0][19] == "de_node");
  for (const auto& a : actions) {
    const std::string node = std::to_string(a.at("node").get<int>());
    const double drain = a.at("drain_from_s").get<double>(), sw = a.at("switched_at_s").get<double>();
    int prefilled = 0;
    for (size_t i = 1; i < rows.size(); ++i) {
      const double issue = std::stod(rows[i][2]);
      if (rows[i][19] == node) CHECK(issue <= drain);
      if (rows[i][17] == node) {
        CHECK(issue >= sw);
        prefilled++;
      }
    }
    // The first converted node prefills the turns that follow (a later one may find the workload over).
    if (node == std::to_string(actions[0].at("node").get<int>())) CHECK(prefilled > 0);
  }
  CHECK(j.at("summary").at("turns_completed") == 800);
}

TEST_CASE("Autoscale: off (the default) converts nothing and reports nothing", "[e2e]") {
  const auto j = e2e::run_ok(kAutoscaleCase, kOverloaded);
  CHECK_FALSE(j.at("summary").contains("autoscale"));
  CHECK_FALSE(j.at("summary").contains("roles"));
  // On, but with a relax so small that no side counts as relaxed (TPOT is never below 1e-6 x 50 ms): the
  // signals are read at every tick and nothing moves.
  auto sets = kOverloaded;
  sets.push_back("control.autoscale.policy=slo");
  sets.push_back("control.autoscale.relax=1e-6");
  const auto k = e2e::run_ok(kAutoscaleCase, sets);
  CHECK(k.at("summary").at("autoscale").at("actions").empty());
  CHECK(k.at("summary").at("autoscale").at("ticks").get<int>() > 0);
}
