// End-to-end checks of a prefill pass's transfers against hand computations: where a chunked prefill loads
// its cached KV from, and the EP exchange of a pass over two nodes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "tests/e2e/support.h"

TEST_CASE(
    "Prefill: a turn chunked over two passes -> the first chunk's KV is loaded from the DE buffer it went to",
    "[e2e]") {
  // chunked_1p1d: one 5000-token turn (no hit, 10 generated) on e2e-io-hw (1 MB of KV per token), PE
  // read path, a compute quota that cuts the prefill in two passes. The pass sizes come from the timeline
  // (written by the engine's pass loop, not by the byte accounting): pass 2 starts with C cached tokens,
  // the KV that pass 1 computed and pushed to the DE buffer.
  e2e::Scratch dir;
  const std::string path = (dir.dir / "tl.json").string();
  const auto r = e2e::run_ok(e2e::case_file("chunked_1p1d.json"), {"outputs.timeline=" + path});
  const auto tl = nlohmann::json::parse(e2e::read_text(path));
  int passes = 0;
  double cached = 0;
  for (const auto& e : tl.at("traceEvents"))
    if (e.value("name", "") == "prefill" && e.at("args").contains("cached_tokens")) {
      passes++;
      cached += e.at("args").at("cached_tokens").get<double>();
    }
  REQUIRE(passes == 2);
  REQUIRE(cached > 0);
  const double kv = 1e6, miss = 5000, gen = 10;
  // The PE node's DRAM carries nothing: no hit is read into its buffer, and no KV computed on its GPU
  // goes there (the code before loaded pass 2's cached KV from it: C MB).
  CHECK(e2e::node_link_bytes(r, "dram", 0, "shared") == 0);
  // The DE node's DRAM: the pushes (miss), pass 2's load of the C cached tokens, the H2D (miss), the
  // persist of the appended KV (miss), the D2H and persist of the generated KV (gen each).
  CHECK(e2e::node_link_bytes(r, "dram", 1, "shared") ==
        Approx((3 * miss + cached + 2 * gen) * kv).epsilon(1e-9));
}

TEST_CASE("Prefill EP exchange: one turn on 2P1D of DS 27B -> every prefill CNIC carries the pass's exchange",
          "[e2e]") {
  // ep_2p1d: DS 27B, one turn of 5,000 new tokens on one PE GPU; the prefill EP group (and DP group) is the
  // 16 GPUs of the two prefill nodes. Whatever the passes, the exchange is linear in their tokens: per GPU,
  // by hand, 5,000 / 16 tokens x hidden 2,560 x (1.03125 + 2) B x 29/30 MoE layers x 2 nodes hit x (2 - 1)/2
  // remote x 30 layers = 70,325,000 B each way on every prefill CNIC. The second node holds no request, so
  // its CNICs carry nothing else. A node flow that added each GPU's bytes would carry 8 x that; a model that
  // exchanged only a GPU's own tokens would leave the idle node at 0.
  const auto r = e2e::run_ok(e2e::case_file("ep_2p1d.json"));
  int links = 0;
  for (const auto& l : r.at("resources").at("cnic"))
    if (l.at("role") == "prefill" && l.at("node") == 1) {
      CHECK(l.at("bytes").get<double>() == Approx(70325000.0).epsilon(1e-9));
      links++;
    }
  CHECK(links == 16);  // 8 CNICs, each direction
}

TEST_CASE("Prefill pass of a DP group over 16 GPUs -> one GPU execution per pass, each GPU's own busy time",
          "[e2e]") {
  // ep_2p1d: one turn on one PE GPU of a 16-GPU DP group (two prefill nodes), one pass. The group computes in
  // lock-step, so one execution stands for the pass; the code before ran one per GPU (16 here, 8 with groups
  // of 8), and an actor's executions sit in a SimGrid list that each of its transfers' ends walks. The GPU
  // with the request computes its attention and the group's MoE share, the 15 others the MoE share alone
  // (the experts at the group's average and the exchange's latency, which two micro-batches cannot hide on a
  // GPU with little to compute): about 98 ms against 9 ms (EP16) and 101 against 13 (EP8). A model that
  // charged every GPU the pass's time would give the idle GPUs the loaded GPU's busy time, a ratio of 1.
  for (const char* dp : {"0", "8"}) {
    INFO("prefill_dp_group_gpus " << dp);
    const auto r =
        e2e::run_ok(e2e::case_file("ep_2p1d.json"), {std::string("cluster.prefill_dp_group_gpus=") + dp});
    CHECK(r.at("run_info").at("gpu_executions").get<int>() == 1);
    double loaded = -1, idle = -1;
    for (const auto& g : r.at("resources").at("gpu")) {
      if (g.at("role") != "prefill") continue;
      const double busy = g.at("busy_s").get<double>();
      if (g.at("node") == 0 && g.at("gpu") == 0) {
        loaded = busy;
      } else if (std::string(dp) == "0" || g.at("node") == 0) {  // the groups of 8: node 1 has no pass
        if (idle < 0) idle = busy;
        CHECK(busy == Approx(idle).epsilon(1e-12));
      }
    }
    CHECK(idle > 0);
    CHECK(loaded > 5 * idle);
  }
}

TEST_CASE(
    "Quota scope: a long first turn among short ones -> cut under pass, whole under layer as under fifo",
    "[e2e]") {
  // quota_scope_1p1d: DS 27B, eight prefill GPUs in one pass group, agent 0's first turn 60K tokens (about
  // 33 ms of predicted attention per layer, 1 s over the 30 layers), the others' 1K. Under `pass` the quota
  // cuts it: every pass of GPU 0 (the timeline's "prefill" events) predicts at most 300 ms, some of them are
  // cut; the other GPUs' first turns do not wait for the whole prompt. Under `layer` 33 ms is far from the
  // quota: nothing is cut, and the run is the fifo run's, bit for bit.
  e2e::Scratch dir;
  const std::string case_file = e2e::case_file("quota_scope_1p1d.json");
  const std::string tl_path = (dir.dir / "tl.json").string();
  const std::string pass_csv = (dir.dir / "pass.csv").string(), layer_csv = (dir.dir / "layer.csv").string();
  const auto pass = e2e::run_ok(
      case_file, {"policy.quota_scope=pass", "outputs.timeline=" + tl_path, "outputs.requests=" + pass_csv});
  const auto layer = e2e::run_ok(case_file, {"policy.quota_scope=layer", "outputs.requests=" + layer_csv});
  const auto fifo = e2e::run_ok(case_file, {"policy.batching=fifo"});

  const auto& pp = pass.at("summary").at("prefill_passes");
  CHECK(pp.at("closed_by_quota_share").get<double>() > 0);
  CHECK(pp.at("with_cut_share").get<double>() > 0);
  CHECK(
      pass.at("summary").at("time_split").at("prefill").at("imbalance_by_cause").at("chunk_s").get<double>() >
      0);
  // Every GPU batch within the quota; a cut one filled to it (the binary search leaves less than one
  // token's attention, well under 1% of 300 ms, unused); the three cut chunks of the 60K prompt.
  int cut = 0;
  double cut_tokens = 0;
  const nlohmann::json tl = nlohmann::json::parse(e2e::read_text(tl_path));
  for (const auto& e : tl.at("traceEvents")) {
    if (e.value("name", "") != "prefill" || !e.at("args").contains("quota_measure_s")) continue;
    const double measure = e.at("args").at("quota_measure_s").get<double>();
    CHECK(measure <= 0.3);
    if (e.at("args").at("cut").get<double>() > 0) {
      CHECK(measure > 0.297);
      cut++;
      cut_tokens += e.at("args").at("tokens").get<double>();
    }
  }
  CHECK(cut >= 3);  // about 1 s of attention (more at a lower kernels.prefill_efficiency) in 0.3 s chunks
  CHECK(cut_tokens < 60000);

  const auto& lp = layer.at("summary").at("prefill_passes");
  CHECK(lp.at("closed_by_quota_share").get<double>() == 0);
  CHECK(lp.at("with_cut_share").get<double>() == 0);
  nlohmann::json a = e2e::without_run_info(layer), b = e2e::without_run_info(fifo);
  a.erase("scenario");
  b.erase("scenario");
  a.erase("requests");
  CHECK(a == b);

  // The first turns of agents 1-7 (1K tokens each) wait for agent 0's first pass only: shorter under pass.
  const auto first_ttft = [](const std::string& csv) {
    const auto rows = e2e::read_csv(csv);
    REQUIRE(!rows.empty());
    const auto column = [&](const std::string& name) {
      const auto it = std::find(rows[0].begin(), rows[0].end(), name);
      REQUIRE(it != rows[0].end());
      return static_cast<size_t>(it - rows[0].begin());
    };
    const size_t agent = column("agent"), turn = column("turn"), ttft = column("ttft_s");
    double sum = 0;
    int n = 0;
    for (size_t i = 1; i < rows.size(); ++i)
      if (rows[i].at(turn) == "0" && rows[i].at(agent) != "0") {
        sum += std::stod(rows[i].at(ttft));
        n++;
      }
    REQUIRE(n == 7);
    return sum / n;
  };
  CHECK(first_ttft(pass_csv) < 0.8 * first_ttft(layer_csv));
}
