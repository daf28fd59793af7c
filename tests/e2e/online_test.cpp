// End-to-end checks of online mode (Poisson arrivals, stop rules, SLO summary), trace replay (Mooncake
// and Azure excerpts) and `dpsim capacity`, on DS 27B 1P1D (tests/e2e/cases/online_1p1d.json,
// replay_1p1d.json).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/workload/mooncake.h"
#include "tests/e2e/support.h"

namespace {

const std::string kOnline = e2e::case_file("online_1p1d.json");
const std::string kReplay = e2e::case_file("replay_1p1d.json");

double num(const nlohmann::json& j, const char* a, const char* b = nullptr) {
  return b ? j.at("summary").at(a).at(b).get<double>() : j.at("summary").at(a).get<double>();
}

std::string stopped_by(const nlohmann::json& j) {
  return j.at("summary").at("stopped_by").get<std::string>();
}

}  // namespace

TEST_CASE("Online: arrival rate -> more agents per second raise the TTFT", "[e2e]") {
  const auto slow = e2e::run_ok(kOnline, {"workload.aps=0.5"});
  const auto fast = e2e::run_ok(kOnline, {"workload.aps=200"});
  for (const auto* r : {&slow, &fast}) {
    CHECK(stopped_by(*r) == "all_turns_done");
    CHECK(num(*r, "agents_arrived") == 200);
  }
  // 200 arrivals at 0.5/s take about 400 s (the last one is a sum of 200 exponential gaps).
  CHECK(num(slow, "sim_end_s") > 300);
  CHECK(num(fast, "sim_end_s") < num(slow, "sim_end_s"));
  CHECK(num(fast, "ttft_s", "mean") > 3 * num(slow, "ttft_s", "mean"));
  // The breakdown's parts add up to the TTFT: queueing + read + prefill (alloc comes after the first token).
  const auto& b = slow.at("summary").at("ttft_breakdown_s");
  CHECK(b.at("queue").get<double>() + b.at("read").get<double>() + b.at("prefill").get<double>() ==
        Approx(num(slow, "ttft_s", "mean")).epsilon(1e-4));
  // The same seed gives the same run.
  CHECK(e2e::without_run_info(e2e::run_ok(kOnline, {"workload.aps=0.5"})) == e2e::without_run_info(slow));
}

TEST_CASE("Online: a TTFT SLO that cannot hold -> stopped_by ttft_slo, SLO not met", "[e2e]") {
  const auto r =
      e2e::run_dpsim(kOnline, {"workload.aps=50", "workload.online.stop_on_slo=true", "slo.ttft_s=0.01"});
  REQUIRE(r.exit_code == 0);
  CHECK(stopped_by(r.result) == "ttft_slo");
  CHECK_FALSE(r.result.at("complete").get<bool>());
  CHECK_FALSE(r.result.at("summary").at("meets_slo").get<bool>());
  // The first check after 1 s of simulated time already sees the queue.
  CHECK(num(r.result, "stopped_at_s") == Approx(1.0));
  // The rule waits for slo_min_turns turns in its window: with more than the run ever holds, it never fires.
  const auto q = e2e::run_dpsim(kOnline, {"workload.aps=50", "workload.online.stop_on_slo=true",
                                          "slo.ttft_s=0.01", "workload.online.slo_min_turns=100000"});
  REQUIRE(q.exit_code == 0);
  CHECK(stopped_by(q.result) == "all_turns_done");
  CHECK_FALSE(q.result.at("summary").at("meets_slo").get<bool>());
}

TEST_CASE("Online: steady TTFT -> stopped_by steady_state after the lag and the window", "[e2e]") {
  // Tolerance 10 (1,000%): the first comparison (at steady_lag_s + steady_window_s = 15 s) passes.
  const auto r = e2e::run_dpsim(kOnline, {"workload.aps=0.5", "workload.online.stop_on_steady=true",
                                          "workload.online.steady_tolerance=10"});
  REQUIRE(r.exit_code == 0);
  CHECK(stopped_by(r.result) == "steady_state");
  CHECK(num(r.result, "stopped_at_s") == Approx(15.0));
  // A zero tolerance never holds while TTFTs vary: the run ends otherwise.
  const auto t = e2e::run_dpsim(kOnline, {"workload.aps=0.5", "workload.online.stop_on_steady=true",
                                          "workload.online.steady_tolerance=0", "sim.time_limit_s=20"});
  REQUIRE(t.exit_code == 0);
  CHECK(stopped_by(t.result) == "time_limit");
  CHECK(num(t.result, "stopped_at_s") == Approx(20.0));
}

TEST_CASE("Online: SLO summary -> attainment in [0, 1] and meets_slo at a light load", "[e2e]") {
  const auto r = e2e::run_ok(kOnline, {"workload.aps=0.5", "slo.ttft_s=1000", "slo.tpot_s=10"});
  CHECK(num(r, "slo_attainment") == 1.0);
  CHECK(r.at("summary").at("meets_slo").get<bool>());
  const auto strict = e2e::run_ok(kOnline, {"workload.aps=0.5", "slo.ttft_s=1e-6"});
  CHECK(num(strict, "slo_attainment") == 0.0);
  CHECK_FALSE(strict.at("summary").at("meets_slo").get<bool>());
}

TEST_CASE("Replay: Mooncake excerpt -> every request completes with the trace's hit tokens", "[e2e]") {
  auto trace = sim::workload::read_mooncake(e2e::case_file("mooncake_excerpt.jsonl"));
  REQUIRE(static_cast<bool>(trace));
  double hit = 0, miss = 0, gen = 0;
  for (const auto& q : trace->requests) {
    const double h = static_cast<double>(std::min(q.hit_tokens, q.input_tokens - 1));
    hit += h;
    miss += static_cast<double>(q.input_tokens) - h;
    gen += static_cast<double>(q.output_tokens);
  }
  REQUIRE(hit > 0);
  const auto r = e2e::run_ok(kReplay);  // also: storage bytes read == hit tokens x KV bytes per token
  CHECK(num(r, "turns_completed") == static_cast<double>(trace->requests.size()));
  CHECK(num(r, "agents") == trace->sessions);
  CHECK(num(r, "hit_tokens") == hit);
  CHECK(num(r, "miss_tokens") == miss);
  CHECK(num(r, "gen_tokens") == gen);
  CHECK(num(r, "hit_rate") == Approx(hit / (hit + miss)));
  // Requests arrive at their timestamps: the run lasts at least until the last arrival.
  CHECK(num(r, "sim_end_s") >= trace->requests.back().arrival_s);
}

TEST_CASE("Replay: Azure excerpt -> every single-turn request completes", "[e2e]") {
  const auto r = e2e::run_ok(kReplay, {"workload.trace=azure_excerpt.csv", "workload.trace_format=azure"});
  CHECK(num(r, "turns_completed") == 30);
  CHECK(num(r, "agents") == 30);
  CHECK(num(r, "hit_tokens") == 0);
}

TEST_CASE("Capacity: small cluster -> the capacity meets the SLO and capacity x (1 + tolerance) does not",
          "[e2e]") {
  e2e::Scratch scratch;
  const std::string out = (scratch.dir / "capacity.json").string();
  const std::vector<std::string> sets = {"workload.online.stop_on_slo=true", "slo.ttft_s=0.2"};
  std::string cmd = e2e::timeout_prefix(120) + e2e::shell_quoted(DPSIM_BINARY) + " capacity " +
                    e2e::shell_quoted(kOnline) + " --lo 1 --hi 400 --tolerance 0.1 --out " +
                    e2e::shell_quoted(out) + " > /dev/null";
  for (const auto& s : sets) cmd += " --set " + e2e::shell_quoted(s);
  REQUIRE(std::system(cmd.c_str()) == 0);
  const auto c = e2e::read_json(out);
  CHECK(c.at("kind") == "capacity");
  CHECK(c.at("slo").at("ttft_s").get<double>() == 0.2);
  REQUIRE(c.at("capacity_aps").is_number());
  const double cap = c.at("capacity_aps").get<double>();
  CHECK(cap > 1);
  CHECK(cap < 400);
  REQUIRE(c.at("points").size() >= 3);
  for (const auto& p : c.at("points")) {
    CHECK(p.contains("ttft_s"));
    CHECK(p.at("ttft_breakdown_s").contains("queue"));
  }
  auto at = [&](double aps) {
    std::vector<std::string> s = sets;
    char buf[64];
    std::snprintf(buf, sizeof buf, "workload.aps=%.17g", aps);
    s.push_back(buf);
    const auto r = e2e::run_dpsim(kOnline, s);
    REQUIRE(r.exit_code == 0);
    return r.result.at("summary").at("meets_slo").get<bool>();
  };
  CHECK(at(cap));
  CHECK_FALSE(at(cap * 1.1));
}
