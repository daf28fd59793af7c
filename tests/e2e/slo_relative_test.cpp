// The relative SLO (slo.mode = relative; cost/unloaded.h, control/slo_judgement.h): each turn judged against
// a multiple of its own unloaded latency.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

const std::vector<std::string> kRelative = {"slo.mode=relative", "slo.ttft_scale=5", "slo.tpot_scale=5"};

// An online run cut by its time limit or a stop rule: not every turn completes, so no run_ok.
nlohmann::json run_online(const std::string& scenario, const std::vector<std::string>& sets) {
  const auto r = e2e::run_dpsim(scenario, sets, 60);
  INFO(r.command << "\n" << r.stderr_text);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.result.is_object());
  return r.result;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// A lone agent on an idle cluster: its turns run one at a time, so each turn's TTFT is its unloaded TTFT as
// the simulation measures it, through SimGrid's links and executions. The cost model's estimate must agree
// within 3% on every turn (ttft_over_unloaded in [0.97, 1.03]). Leaving out that the first pass's load and
// push share the PE GPU's CNIC read direction puts Qwen 32B at 1.42; leaving out Basic's unhidden push puts
// the fixture's first turn at 10.
TEST_CASE("Relative SLO: the unloaded TTFT and TPOT of a lone agent's turns match the simulation", "[e2e]") {
  struct Case {
    std::string scenario;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases = {
      {e2e::case_file("io_1p1d.json"), {}},
      {e2e::case_file("io_1p1d.json"), {"policy.layerwise=true"}},
      // The paper's files place with the dualpath scheduler, whose fetch ticks (policy.fetch_period_s) a lone
      // turn waits for and the unloaded latency leaves out: these place at once.
      {e2e::repo_file("scenarios/paper/ds27b-32k.json"),
       {"workload.agents=1", "cluster.prefill_nodes=1", "cluster.decode_nodes=1", "policy.read_path=pe",
        "policy.scheduler=round_robin"}},
      {e2e::repo_file("scenarios/paper/qwen32b-32k.json"),
       {"workload.agents=1", "policy.read_path=pe", "policy.scheduler=round_robin"}},
      {e2e::repo_file("scenarios/paper/ds660b-32k.json"),
       {"workload.agents=1", "policy.read_path=pe", "policy.layerwise=false", "policy.scheduler=round_robin",
        "policy.batching=fifo"}},
  };
  for (const auto& c : cases) {
    const auto r = e2e::run_ok(c.scenario, with(kRelative, c.sets), 60);
    const auto& slo = r.at("summary").at("slo");
    INFO(c.scenario << " " << slo.dump());
    CHECK(slo.at("turns_judged").get<int>() >= 4);
    const auto& ratio = slo.at("ttft_over_unloaded");
    CHECK(ratio.at("max").get<double>() <= 1.03);
    CHECK(ratio.at("mean").get<double>() >= 0.97);
    // A batch of one: the measured TPOT is the unloaded step.
    CHECK(r.at("summary").at("tpot_s").at("mean").get<double>() ==
          Approx(slo.at("unloaded_tpot_s").at("mean").get<double>()).epsilon(0.01));
    CHECK(r.at("summary").at("meets_slo").get<bool>());
  }
}

// DS 27B on 1P1D, online. At 0.1 APS the turns run near their unloaded latency (TTFT about 0.08 s): within
// 5x of it for 99% of them, so the relative SLO is met, while an absolute bound of 50 ms is not (the TTFT
// rule stops the run). At 2 APS, five times the cluster's capacity, both fail. Placed round-robin without the
// compute quota, as the loads were chosen (the paper's scheduler keeps the TTFT of this overload under 4 s
// for longer than the 600 s the run lasts).
TEST_CASE("Relative SLO: met where the absolute one fails, and failed under overload", "[e2e]") {
  const std::string online = e2e::repo_file("scenarios/paper/online-ds27b.json");
  const std::vector<std::string> light = {"workload.aps=0.1", "sim.time_limit_s=300", "slo.ttft_s=0.05",
                                          "policy.scheduler=round_robin", "policy.batching=fifo"};
  const auto rel = run_online(online, with(kRelative, light));
  const auto& s = rel.at("summary");
  INFO(s.at("slo").dump());
  CHECK(s.at("stopped_by") == "time_limit");
  CHECK(s.at("meets_slo").get<bool>());
  CHECK(s.at("slo_attainment").get<double>() >= 0.9);
  CHECK(s.at("slo").at("mode") == "relative");
  CHECK(s.at("slo").at("ttft_judged_s").get<double>() > 0.05);  // the absolute statistic, reported beside

  const auto abs = run_online(online, light);
  CHECK_FALSE(abs.at("summary").at("meets_slo").get<bool>());
  CHECK(abs.at("summary").at("stopped_by") == "ttft_slo");

  const std::vector<std::string> heavy = {"workload.aps=2", "sim.time_limit_s=600",
                                          "policy.scheduler=round_robin", "policy.batching=fifo"};
  const auto rel_heavy = run_online(online, with(kRelative, heavy));
  CHECK_FALSE(rel_heavy.at("summary").at("meets_slo").get<bool>());
  CHECK(rel_heavy.at("summary").at("slo_attainment").get<double>() < 0.5);
  const auto abs_heavy = run_online(online, heavy);
  CHECK_FALSE(abs_heavy.at("summary").at("meets_slo").get<bool>());
}

// The TTFT stop rule in relative mode: once the warm-up is over (60 s here), a window whose share of turns
// within their own bound falls under slo.attainment stops the run.
TEST_CASE("Relative SLO: the TTFT rule stops an overloaded run on attainment", "[e2e]") {
  const auto r = run_online(e2e::repo_file("scenarios/paper/online-ds27b.json"),
                            with(kRelative, {"workload.aps=2", "slo.warmup_s=60", "sim.time_limit_s=600"}));
  CHECK(r.at("summary").at("stopped_by") == "ttft_slo");
  CHECK(r.at("summary").at("stopped_at_s").get<double>() < 120);
  CHECK_FALSE(r.at("summary").at("meets_slo").get<bool>());
}
