// End-to-end checks of `dpsim plan` (sim/study/plan.cpp): its answer on a small online case against a
// brute-force grid of the same space run by `dpsim sweep`, the rounds of --emit-jobs giving the same
// answer, and bad arguments. Case: tests/e2e/cases/cold_start_4p1d.json (DS 27B, agents with a cold
// first round) at 4 agents/s, 120 agents, 2 to 6 nodes, on the paper's hardware (analytic range 1/7..7/2).
#include <fmt/format.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/e2e/support.h"

namespace {

const std::string kPlanCase = e2e::case_file("cold_start_4p1d.json");
const std::string kLoad = " --set workload.aps=4 --set workload.agents=120";

std::string dpsim(const std::string& args, const std::filesystem::path& log) {
  return e2e::timeout_prefix(300) + e2e::shell_quoted(e2e::dpsim_binary()) + " " + args + " >" +
         e2e::shell_quoted(log.string()) + " 2>&1";
}

// The brute-force grid: every split of 2 to 6 nodes with 1/7 <= P/D <= 7/2, written out by hand (4:1 and
// 5:1 are outside; no size has more than the plan's 5 splits, so none is thinned).
const char* kGrid = "1:1,1:2,2:1,1:3,2:2,3:1,1:4,2:3,3:2,1:5,2:4,3:3,4:2";

}  // namespace

TEST_CASE("Plan: online case -> the smallest cluster that a brute-force sweep of the same space finds",
          "[e2e][plan]") {
  e2e::Scratch s;
  const auto plan_dir = s.dir / "plan", sweep_dir = s.dir / "sweep";
  REQUIRE(e2e::shell(dpsim("plan " + e2e::shell_quoted(kPlanCase) + kLoad + " --max-nodes 6 --jobs 2 --out " +
                               e2e::shell_quoted(plan_dir.string()),
                           s.dir / "plan.log")) == 0);
  INFO(e2e::read_text(s.dir / "plan.log"));
  REQUIRE(e2e::shell(dpsim("sweep " + e2e::shell_quoted(kPlanCase) + kLoad + " --pd " + kGrid +
                               " --jobs 2 --out " + e2e::shell_quoted(sweep_dir.string()),
                           s.dir / "sweep.log")) == 0);
  const nlohmann::json plan = e2e::read_json((plan_dir / "plan.json").string());
  CHECK(plan.at("kind") == "plan");
  CHECK(plan.at("goal") == "slo");
  // Brute force: the fewest GPUs among the grid's points that meet the SLO; at that size, the lowest
  // margin max(judged TTFT / bound, judged TTPOT / bound).
  int best_gpus = 0;
  double best_margin = 0;
  std::string best;
  int grid_points = 0;
  for (const auto& e : std::filesystem::directory_iterator(sweep_dir / "points")) {
    if (e.path().extension() != ".json") continue;
    grid_points++;
    const nlohmann::json r = e2e::read_json(e.path().string());
    const auto& sm = r.at("summary");
    if (!sm.at("meets_slo").get<bool>()) continue;
    const int gpus = 8 * (r.at("scenario").at("cluster").at("prefill_nodes").get<int>() +
                          r.at("scenario").at("cluster").at("decode_nodes").get<int>());
    const auto& slo = sm.at("slo");
    const double margin = std::max(slo.at("ttft_judged_s").get<double>() / slo.at("ttft_s").get<double>(),
                                   slo.at("tpot_judged_s").get<double>() / slo.at("tpot_s").get<double>());
    if (best.empty() || gpus < best_gpus || (gpus == best_gpus && margin < best_margin)) {
      best_gpus = gpus;
      best_margin = margin;
      best = e.path().stem().string();  // "p3-d1"
    }
  }
  CHECK(grid_points == 13);
  REQUIRE(!best.empty());
  INFO("brute force: " << best << " with " << best_gpus << " GPUs");
  const auto& rec = plan.at("recommended");
  REQUIRE(rec.is_object());
  CHECK(rec.at("gpus").get<int>() == best_gpus);
  CHECK(fmt::format("p{}-d{}", rec.at("p").get<int>(), rec.at("d").get<int>()) == best);
  CHECK(rec.at("ok").get<bool>());
  // The answer needs more than the smallest cluster (the case is not trivial), and the plan ran fewer
  // points than the grid.
  CHECK(best_gpus > 16);
  CHECK(plan.at("runs").get<int>() < grid_points);
  // Every failed neighbour of the answer says why.
  CHECK(!plan.at("rejected_neighbours").empty());
  for (const auto& n : plan.at("rejected_neighbours")) CHECK(!n.at("why").get<std::string>().empty());
  // The front holds the answer's size (nothing meets the SLO with fewer GPUs).
  int front_min = 1 << 30;
  for (const auto& p : plan.at("points"))
    if (p.at("on_front").get<bool>()) front_min = std::min(front_min, p.at("gpus").get<int>());
  CHECK(front_min == best_gpus);

  // The table names its metric and its unit, and the answer's row prints the margin the brute force found.
  const std::string log = e2e::read_text(s.dir / "plan.log");
  CHECK_THAT(log, Catch::Matchers::Contains("x SLO  why not\n"));
  CHECK_THAT(log, Catch::Matchers::Contains("x SLO: the larger of TTFT / its bound and TPOT / its bound"));
  const size_t row = log.find("\n" + rec.at("name").get<std::string>() + " ");
  REQUIRE(row != std::string::npos);
  std::istringstream fields(log.substr(row + 1, log.find('\n', row + 1) - row - 1));
  std::string name, ok, front;
  int gpus = 0;
  double metric = 0;
  fields >> name >> gpus >> ok >> front >> metric;
  CHECK(ok == "yes");
  CHECK(metric == Approx(best_margin).epsilon(1e-3));

  // Rerun: every point is reused, nothing runs, the same answer.
  REQUIRE(e2e::shell(dpsim("plan " + e2e::shell_quoted(kPlanCase) + kLoad + " --max-nodes 6 --out " +
                               e2e::shell_quoted(plan_dir.string()),
                           s.dir / "plan2.log")) == 0);
  const nlohmann::json again = e2e::read_json((plan_dir / "plan.json").string());
  CHECK(again.at("runs_this_invocation") == 0);
  CHECK(again.at("recommended").at("name") == rec.at("name"));
}

TEST_CASE("Plan: --emit-jobs rounds run by hand -> the same answer as a plan that runs them", "[e2e][plan]") {
  e2e::Scratch s;
  const auto dir = s.dir / "plan";
  const auto jobs = s.dir / "jobs.sh";
  const std::string args = "plan " + e2e::shell_quoted(kPlanCase) + kLoad + " --max-nodes 6 --out " +
                           e2e::shell_quoted(dir.string()) + " --emit-jobs " +
                           e2e::shell_quoted(jobs.string());
  int rounds = 0;
  while (rounds < 20) {
    std::filesystem::remove(jobs);
    REQUIRE(e2e::shell(dpsim(args, s.dir / "emit.log")) <= 1);
    if (!std::filesystem::exists(jobs)) break;  // done: plan.json written instead
    rounds++;
    REQUIRE(e2e::shell("sh " + e2e::shell_quoted(jobs.string()) + " >/dev/null 2>&1") == 0);
  }
  INFO(e2e::read_text(s.dir / "emit.log"));
  CHECK(rounds >= 2);
  const nlohmann::json plan = e2e::read_json((dir / "plan.json").string());
  REQUIRE(plan.at("recommended").is_object());
  const auto direct = s.dir / "direct";
  REQUIRE(e2e::shell(dpsim("plan " + e2e::shell_quoted(kPlanCase) + kLoad + " --max-nodes 6 --out " +
                               e2e::shell_quoted(direct.string()),
                           s.dir / "direct.log")) == 0);
  const nlohmann::json ran = e2e::read_json((direct / "plan.json").string());
  CHECK(plan.at("recommended").at("name") == ran.at("recommended").at("name"));
  CHECK(plan.at("runs") == ran.at("runs"));
}

TEST_CASE("Plan: bad arguments -> exit 2 and a message naming them", "[e2e][plan]") {
  e2e::Scratch s;
  struct Bad {
    std::string args, message;
  };
  const std::vector<Bad> bad = {
      {"--objective cost", "cost.per_node_hour"},
      {"--objective speed", "--objective: expected gpus or cost"},
      {"--jct-target 100", "--jct-target is for offline scenarios"},
      {"--min-nodes 1", "expected 2 <= --min-nodes <= --max-nodes"},
      {"--max-nodes 4 --min-nodes 5", "expected 2 <= --min-nodes <= --max-nodes"},
      {"--set-list policy.read_path=pe,nope", "policy.read_path"},
  };
  for (const auto& b : bad) {
    const auto log = s.dir / "bad.log";
    const int code = e2e::shell(dpsim("plan " + e2e::shell_quoted(kPlanCase) + " " + b.args + " --out " +
                                          e2e::shell_quoted((s.dir / "p").string()),
                                      log));
    INFO(b.args << ": " << e2e::read_text(log));
    CHECK(code == 2);
    CHECK(e2e::read_text(log).find(b.message) != std::string::npos);
  }
}

TEST_CASE("Plan: no cluster meets the goal -> exit 1, and latency-bound only when no resource ran short",
          "[e2e][plan]") {
  e2e::Scratch s;
  auto plan = [&](const std::string& args, const std::string& name) {
    const auto dir = s.dir / name;
    const int code = e2e::shell(dpsim(
        "plan " + e2e::shell_quoted(kPlanCase) + " " + args + " --out " + e2e::shell_quoted(dir.string()),
        s.dir / (name + ".log")));
    INFO(e2e::read_text(s.dir / (name + ".log")));
    CHECK(code == 1);
    return e2e::read_json((dir / "plan.json").string());
  };
  // A TTFT bound of 10 ms at a light load: every run fails with every resource far from full.
  const auto light =
      plan("--set workload.aps=1 --set workload.agents=60 --set slo.ttft_s=0.01 --max-nodes 4", "l");
  CHECK(light.at("recommended").is_null());
  REQUIRE(light.at("diagnosis").is_string());
  CHECK(light.at("diagnosis").get<std::string>().find("latency") != std::string::npos);
  for (const auto& p : light.at("points"))
    if (p.at("nodes") == 4) CHECK(p.at("bottleneck").at("utilization").get<double>() < 0.5);
  // An overload on at most 3 nodes: the prefill GPUs run full, so the diagnosis is not latency.
  const auto heavy = plan("--set workload.aps=40 --set workload.agents=600 --max-nodes 3", "h");
  CHECK(heavy.at("recommended").is_null());
  CHECK(heavy.at("diagnosis").is_null());
  bool full = false;
  for (const auto& p : heavy.at("points"))
    full = full || p.at("bottleneck").at("utilization").get<double>() >= 0.5;
  CHECK(full);
}

// An absolute SLO below what the workload's turns take alone on an idle cluster: the plan says so before
// any run (study/slo_floor.h), naming the share of turns over the bound, instead of searching to
// --max-nodes. Case: the Mooncake excerpt replayed online on DS 27B (tests/e2e/cases/replay_1p1d.json), whose
// requests take 0.1 s and more alone, against a 10 ms TTFT bound; a run confirms it misses the bound. With a
// bound of 100 s the floor is no obstacle and the plan runs.
TEST_CASE("Plan: an absolute SLO that no size can meet -> said before any run", "[e2e][plan]") {
  e2e::Scratch s;
  const std::string replay = e2e::case_file("replay_1p1d.json");
  const std::string online = " --set workload.mode=online --set slo.warmup_s=0";
  const auto dir = s.dir / "plan";
  const int code =
      e2e::shell(dpsim("plan " + e2e::shell_quoted(replay) + online +
                           " --set slo.ttft_s=0.01 --max-nodes 64 --out " + e2e::shell_quoted(dir.string()),
                       s.dir / "plan.log"));
  const std::string log = e2e::read_text(s.dir / "plan.log");
  INFO(log);
  CHECK(code == 1);
  CHECK_THAT(log, Catch::Contains("no cluster size can meet slo.ttft_s = 0.01 s"));
  CHECK_THAT(log, Catch::Contains("stopped before any run"));
  const nlohmann::json plan = e2e::read_json((dir / "plan.json").string());
  CHECK(plan.at("runs") == 0);
  CHECK(plan.at("recommended").is_null());
  REQUIRE(plan.at("slo_floor").size() == 1);
  const auto& f = plan.at("slo_floor")[0];
  CHECK(f.at("unreachable").get<bool>());
  CHECK(f.at("turns") == 40);
  CHECK(f.at("ttft_over_share").get<double>() > 0.9);
  CHECK(f.at("unloaded_ttft_s").get<double>() > 0.01);
  // The simulation agrees: on 1P1D the same bound is missed.
  const auto r = e2e::run_dpsim(replay, {"workload.mode=online", "slo.warmup_s=0", "slo.ttft_s=0.01"}, 60);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(r.result.at("summary").at("meets_slo").get<bool>());
  CHECK(r.result.at("summary").at("ttft_s").at("mean").get<double>() > f.at("unloaded_ttft_s").get<double>());

  const auto dir2 = s.dir / "plan2";
  e2e::shell(dpsim("plan " + e2e::shell_quoted(replay) + online +
                       " --set slo.ttft_s=100 --max-nodes 2 --out " + e2e::shell_quoted(dir2.string()),
                   s.dir / "plan2.log"));
  const nlohmann::json plan2 = e2e::read_json((dir2 / "plan.json").string());
  CHECK(plan2.at("runs").get<int>() > 0);
  CHECK_FALSE(plan2.contains("slo_floor"));
}
