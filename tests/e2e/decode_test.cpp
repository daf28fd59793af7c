// End-to-end checks of the run's end and of the decode step's cost against hand computations.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

using e2e::num;

}  // namespace

TEST_CASE("Run end: every turn done -> stopped_at_s is the time the last turn ended", "[e2e]") {
  // Offline: the stop time is the JCT (the last turn's end), not 0.
  const auto off = e2e::run_ok(e2e::case_file("io_1p1d.json"));
  CHECK(off.at("summary").at("stopped_by") == "all_turns_done");
  CHECK(num(off, "jct_s") > 1);
  CHECK(num(off, "stopped_at_s") == Approx(num(off, "jct_s")).epsilon(1e-12));
  // Online at a light load, no stop rule firing: the same.
  const auto on = e2e::run_ok(e2e::case_file("online_1p1d.json"), {"workload.aps=0.5"});
  CHECK(on.at("summary").at("stopped_by") == "all_turns_done");
  CHECK(num(on, "stopped_at_s") == Approx(num(on, "jct_s")).epsilon(1e-12));
}

TEST_CASE("Decode step: an EP model on 1P4D -> each step reads the weights of the decode role's 4 shards",
          "[e2e]") {
  // e2e-shards-model: 2e10 parameters at 1 B, weight_shards 2 (the model's default EP size); the decode
  // role has 4 GPUs, so each DE GPU holds 2e10 / 4 = 5e9 B of weights (the size its HBM is planned with).
  // A step of a batch of one reads those weights plus the KV of the request's context at the plan's start:
  // (hit + miss + 1) tokens x 10 layers x 1e5 B. HBM 1e12 B/s at efficiency 1; compute is 1e18 FLOP/s
  // (negligible); overhead 0.5 ms. The agent (one_agent.jsonl) appends 5000, 2000, 1000, 500 tokens and
  // generates 100, 100, 50, 20, so its turns' hit + miss + 1 are 5001, 7101, 8201, 8751 tokens, and a
  // turn's TPOT (one plan, no other request) is its step time.
  const auto r = e2e::run_ok(e2e::case_file("shards_1p4d.json"));
  const double weights = 2e10 / 4, kv_token = 10 * 1e5, bw = 1e12, overhead = 5e-4;
  double tpot_sum = 0;
  for (double context : {5001.0, 7101.0, 8201.0, 8751.0})
    tpot_sum += (weights + context * kv_token) / bw + overhead;
  CHECK(r.at("summary").at("tpot_s").at("mean").get<double>() == Approx(tpot_sum / 4).epsilon(1e-5));
  // With the model's default sharding (2 GPUs: 1e10 B) every step would take 5 ms more.
  CHECK(r.at("summary").at("tpot_s").at("mean").get<double>() < tpot_sum / 4 + 1e-3);
}

TEST_CASE(
    "Decode lock-step: a short request beside a long one on another GPU of the EP group -> it steps at the "
    "long one's pace",
    "[e2e]") {
  // shards_1p4d (decode role: 4 GPUs on 4 nodes, one EP group) with lockstep_agents.jsonl: "long" (60,000
  // tokens, 2,000 to generate) and "short" (1,000 then 10 tokens). By hand (the first case above), a GPU's
  // own step is (5e9 B of weights + its context x 1e6 B) / 1e12 B/s, plus the group's 0.5 ms: "short" alone
  // at 1,001 tokens steps in 6.501 ms; "long" at 60,001 tokens in 65.501 ms. In lock-step every step of the
  // group takes the slowest GPU's, so while "long" decodes (its context as of its join), every decode span
  // of the group, on any GPU, is 65.501 ms a step. A model that decodes each GPU alone would give "short"
  // its own 6.5 to 6.8 ms.
  e2e::Scratch dir;
  const std::string path = (dir.dir / "tl.json").string();
  e2e::run_ok(e2e::case_file("shards_1p4d.json"),
              {"workload.trace=lockstep_agents.jsonl", "workload.agents=2", "outputs.timeline=" + path});
  const auto doc = e2e::read_json(path);
  std::map<int, std::string> process;
  std::vector<nlohmann::json> spans;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") process[e.at("pid")] = e.at("args").at("name");
    if (e.at("ph") == "X" && e.at("name") == "decode") spans.push_back(e);
  }
  const double slow = (5e9 + 60001 * 1e6) / 1e12 + 5e-4, fast = (5e9 + 1001 * 1e6) / 1e12 + 5e-4;
  std::string long_node;
  double long_start = 1e300;
  for (const auto& e : spans) {
    const std::string proc = process.at(e.at("pid").get<int>());
    if (proc == "requests") continue;
    if (e.at("args").at("context_tokens").get<double>() >= 60001) {
      long_node = proc;
      long_start = std::min(long_start, e.at("ts").get<double>());
    }
  }
  REQUIRE(!long_node.empty());
  int alone = 0, beside = 0;
  for (const auto& e : spans) {
    const std::string proc = process.at(e.at("pid").get<int>());
    if (proc == "requests" || proc == long_node) continue;
    const double step_s = e.at("args").at("step_ms").get<double>() / 1e3;
    if (e.at("ts").get<double>() < long_start) {  // "short" before "long" joined: its own pace
      CHECK(step_s == Approx(fast).epsilon(1e-9));
      alone++;
    } else {
      CHECK(step_s == Approx(slow).epsilon(1e-9));
      beside++;
    }
  }
  CHECK(alone >= 1);
  CHECK(beside >= 2);  // both turns of "short"
}

TEST_CASE(
    "Decode EP exchange: one request on 1P2D of DS 27B -> every decode CNIC carries the group's exchange",
    "[e2e]") {
  // ep_1p2d: DS 27B, one turn of 10 tokens: 9 decode steps in one plan, the group = the 16 GPUs of the two
  // decode nodes, one request: 1/16 per GPU on average. Per step and GPU, by hand: 1/16 token x 6 experts x
  // hidden 2,560 x (1.03125 + 2) B x 29/30 MoE layers x 30 layers x (2 - 1)/2 remote = 42,195 B; 9 steps:
  // 379,755 B each way on every decode CNIC. The node without the request has no other CNIC traffic: its 8
  // CNICs carry 8 x 379,755 B each way. A model that exchanged only a GPU's own batch would leave it idle;
  // one that forgot the remote share would double it.
  const auto r = e2e::run_ok(e2e::case_file("ep_1p2d.json"));
  for (const char* dir : {"read", "write"})
    CHECK(e2e::node_link_bytes(r, "cnic", 2, dir) == Approx(8 * 379755.0).epsilon(1e-9));
  for (const auto& l : r.at("resources").at("cnic"))
    if (l.at("role") == "decode" && !(l.at("node") == 1 && l.at("gpu") == 0))
      CHECK(l.at("bytes").get<double>() == Approx(379755.0).epsilon(1e-9));
}

TEST_CASE("Decode EP exchange: CNICs of 1 MB/s -> the exchange, not the compute, sets the step time",
          "[e2e]") {
  // ep_1p2d on ep-slow-cnic-hw (hopper-8x400g with 1 MB/s CNICs) and its engine (DeepSeek's kernels, no fixed
  // costs). During the turn's 9 decode steps the
  // decode CNICs carry nothing but the exchange (the H2D copy came before, the persist comes after), so each
  // node's exchange flow runs at 1 MB/s: a step's 42,195 B (previous case) take 42.195 ms, against a few ms
  // of compute. With two micro-batches (the default) one micro-batch's exchange of one MoE layer cannot
  // hide behind the other's compute: + 42.195 ms / 29 layers / 2 = 0.7275 ms, a TPOT of 42.9225 ms; with
  // ideal overlap, 42.195 ms. A plan that ended with its compute would give a few ms; and every decode CNIC
  // still carries the 9 steps' 379,755 B each way.
  const auto r = e2e::run_ok(e2e::case_file("ep_1p2d.json"),
                             {"hardware=ep-slow-cnic-hw.json", "engine=ep-slow-cnic-engine.json"});
  CHECK(r.at("summary").at("tpot_s").at("mean").get<double>() ==
        Approx(42195.0 / 1e6 * (1 + 1.0 / 29 / 2)).epsilon(1e-6));
  const auto ideal = e2e::run_ok(
      e2e::case_file("ep_1p2d.json"),
      {"hardware=ep-slow-cnic-hw.json", "engine=ep-slow-cnic-engine.json", "policy.ep_overlap=ideal"});
  CHECK(ideal.at("summary").at("tpot_s").at("mean").get<double>() == Approx(42195.0 / 1e6).epsilon(1e-6));
  for (const char* dir : {"read", "write"})
    CHECK(e2e::node_link_bytes(r, "cnic", 2, dir) == Approx(8 * 379755.0).epsilon(1e-6));
}

TEST_CASE(
    "Decode EP latency: 40 + 50 us per MoE layer on 1 MB/s CNICs -> two micro-batches pay it twice, ideal "
    "hides "
    "it, none adds it to the step",
    "[e2e]") {
  // ep_1p2d on ep-slow-cnic-latency-hw with ep-slow-cnic-latency-engine: ep-slow-cnic-engine plus 40 us of
  // dispatch and 50 us of combine per MoE
  // layer (DS 27B: 29 of 30 layers). A step's exchange bytes take 42.195 ms at 1 MB/s (previous cases);
  // the compute is a few ms. By hand, per step:
  //   two micro-batches: 2 x 29 x 90 us + 42.195 ms + the fill (90 us + 42.195 ms / 29 / 2) = 48.2325 ms;
  //   ideal: the latency (29 x 90 us = 2.61 ms) runs beside the compute and the bytes: 42.195 ms;
  //   none: compute + 2.61 ms + the bytes, exactly 2.61 ms more than the same without the latency.
  // A latency charged once per step (not per layer) or to one micro-batch only fails the first; one that
  // ideal overlap does not hide fails the second.
  const std::string ep = e2e::case_file("ep_1p2d.json");
  auto tpot = [&](std::vector<std::string> sets) {
    return e2e::run_ok(ep, sets).at("summary").at("tpot_s").at("mean").get<double>();
  };
  const std::string hw = "hardware=ep-slow-cnic-latency-hw.json";
  const std::string latency = "engine=ep-slow-cnic-latency-engine.json";
  CHECK(tpot({hw, latency}) == Approx(2 * 29 * 90e-6 + 42.195e-3 + 90e-6 + 42.195e-3 / 29 / 2).epsilon(1e-6));
  CHECK(tpot({hw, latency, "policy.ep_overlap=ideal"}) == Approx(42.195e-3).epsilon(1e-6));
  const double none = tpot({hw, latency, "policy.ep_overlap=none"});
  const double none_without =
      tpot({"hardware=ep-slow-cnic-hw.json", "engine=ep-slow-cnic-engine.json", "policy.ep_overlap=none"});
  CHECK(none - none_without == Approx(29 * 90e-6).epsilon(1e-6));
  // The switch: without fixed costs the latency is gone, whatever the overlap.
  CHECK(tpot({hw, latency, "policy.ep_overlap=none", "policy.fixed_costs=false"}) ==
        Approx(none_without).epsilon(1e-9));
}

TEST_CASE("Decode EP exchange: a run stopped while its group decodes -> its exchange flows end with it",
          "[e2e]") {
  // ep_1p2d decodes its turn from about 0.055 s on; a time limit of 0.058 s stops the run mid-plan. The
  // group's exchange flows (one per decode node, sized for many plans) are withdrawn: the simulation ends
  // within a couple of seconds of the stop (its last persistence and metering window), where a flow left
  // running would carry the simulation on for days of simulated time (241,847 s measured).
  const e2e::Run run = e2e::run_dpsim(e2e::case_file("ep_1p2d.json"), {"sim.time_limit_s=0.058"});
  REQUIRE(run.exit_code == 0);
  const auto& r = run.result;
  CHECK(r.at("summary").at("stopped_by") == "time_limit");
  CHECK(r.at("complete") == false);
  CHECK(r.at("summary").at("sim_end_s").get<double>() < 5);
  CHECK(r.at("invariants").at("link_bytes_conservation_error").get<double>() < 1e-9);
}
