// The compute quota's scope (policy.quota_scope, DualPath §6.2): one DP-attention pass group of DS 660B in
// which one GPU holds an agent's first turn and fifteen hold typical turns, formed as the prefill service
// forms it (each GPU FIFO through cost::QuotaBatchFormer under cost::batch_limits) and priced by
// cost::prefill_pass. Under `pass` the quota bounds each GPU's predicted attention over the whole pass: the
// first turn is cut and the pass is short; under `layer` it bounds one layer's, never binds here, and the
// first turn holds the other fifteen GPUs for its whole prefill.
#include <catch2/catch.hpp>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/batch_quota.h"
#include "sim/cost/compute_plan.h"
#include "tests/unit/paper_files.h"

namespace sim::cost {
namespace {

using Verdict = QuotaBatchFormer::Verdict;

// The pass group: GPU 0 holds a first turn of 9,650 new tokens and no hit; GPUs 1-15 hold two typical turns
// each (429 new tokens over 32,768 cached, the paper's trace: §3).
const Chunk kFirstTurn{0, 9650};
const Chunk kTypical{32768, 429};

struct Pass {
  std::vector<std::vector<Chunk>> chunks;  // per GPU, as formed
  std::vector<std::vector<Verdict>> verdicts;
  std::vector<double> predicted_s;  // per GPU: the quota's measure of its batch
  PassPlan plan;
};

Pass form_and_plan(const std::string& scope) {
  const config::ModelSpec m = sim::testing::pinned_ds660b();
  const config::HardwareSpec hw = sim::testing::pinned_hopper();
  const config::EngineSpec e = sim::testing::pinned_engine();
  config::PolicyConfig p;
  p.batching = "quota";
  p.compute_quota_s = 0.3;
  p.quota_scope = scope;
  const BatchLimits limits = batch_limits(p, e, m);
  Pass out;
  for (int gpu = 0; gpu < 16; ++gpu) {
    const std::vector<Chunk> ready =
        gpu == 0 ? std::vector<Chunk>{kFirstTurn} : std::vector<Chunk>{kTypical, kTypical};
    QuotaBatchFormer former(m, hw, e, limits);
    std::vector<Verdict> verdicts;
    for (const Chunk& c : ready) {
      if (former.closed()) break;
      verdicts.push_back(former.offer(c).verdict);
    }
    out.chunks.push_back(former.chunks());
    out.verdicts.push_back(verdicts);
    out.predicted_s.push_back(former.predicted_s());
  }
  out.plan = prefill_pass(m, hw, e, out.chunks, ep_group(m, hw, 16));
  return out;
}

}  // namespace

// By hand (pinned_ds660b, pinned_hopper, pinned_engine: tests/unit/paper_files.h). A chunk (c, b)'s attention
// of one layer is 278,528 x sum_i min(2048, c + i) / 6.400086e14 + 16,384 x sum_i (c + i) / 1.24677e14 s:
//   a typical turn (32,768, 429): 2.2417933 ms per layer, 136.749 ms over 61 layers; two: 273.499 ms;
//   the first turn (0, 9,650): 13.807927 ms per layer, 842.28 ms over 61 layers.
// Under `pass` the first turn is cut to the largest b with 61 x t(0, b) <= 0.3 s: b = 4,824 (299.916 ms;
// 4,825 gives 300.009 ms). A GPU's part of a layer before the exchange is its attention plus its dense GEMMs,
// max(2 x 279,385,151 params x tokens / 1.2800172e15, 294,565,749 B / 2.66794e12): GPU 0 4.918 + 2.105 =
// 7.022 ms, GPUs 1-15 4.484 + 0.374 = 4.858 ms. The routed experts of the busiest GPU at the group's mean
// (4,824 + 15 x 858) / 16 = 1,105.9 tokens: 2 x 44,040,192 x 8 x 1,105.9 / 1.2800172e15 x 58 / 61 =
// 0.5788 ms; the exchange's NVLink part 0.9995 ms hides under the compute (ideal overlap). The pass:
// 61 x (7.0225 + 0.5788) ms = 0.463681209 s.
// Under `layer` the quota bounds 13.8 ms against 300 ms: nothing is cut; GPU 0's layer is 13.808 + 4.213 =
// 18.020 ms, the experts at (9,650 + 12,870) / 16 = 1,407.5 tokens 0.7367 ms: 61 x 18.757 ms = 1.144188631 s,
// 2.47 times the pass under `pass`, and the other fifteen GPUs wait 74% of it.
TEST_CASE(
    "Quota scope: pass -> the first turn is cut to 4,824 tokens, every GPU within 300 ms, pass 0.4637 s",
    "[unit]") {
  const Pass p = form_and_plan("pass");
  REQUIRE(p.chunks[0].size() == 1);
  CHECK(p.verdicts[0][0] == Verdict::kChunked);
  CHECK(p.chunks[0][0].cached == 0);
  CHECK(p.chunks[0][0].bsz == 4824);
  for (int gpu = 1; gpu < 16; ++gpu) {
    CHECK(p.chunks[gpu].size() == 2);
    CHECK(p.verdicts[gpu] == std::vector<Verdict>{Verdict::kWhole, Verdict::kWhole});
  }
  for (int gpu = 0; gpu < 16; ++gpu) {
    CHECK(p.predicted_s[gpu] <= 0.3);
    // The quota's measure is the GPU's attention over all of the pass's layers.
    CHECK(p.predicted_s[gpu] == Approx(61 * p.plan.attention_s[gpu]).epsilon(1e-12));
  }
  CHECK(p.predicted_s[0] == Approx(0.2999159726).epsilon(1e-9));
  CHECK(p.predicted_s[1] == Approx(0.2734987798).epsilon(1e-9));
  CHECK(p.plan.layer_s * p.plan.layers == Approx(0.463681209).epsilon(1e-8));
  CHECK(p.plan.slowest == 0);
}

TEST_CASE("Quota scope: layer -> the first turn runs whole and the pass takes 1.1442 s", "[unit]") {
  const Pass p = form_and_plan("layer");
  CHECK(p.verdicts[0] == std::vector<Verdict>{Verdict::kWhole});
  CHECK(p.chunks[0][0].bsz == 9650);
  // One layer's attention is the measure: far below the quota.
  CHECK(p.predicted_s[0] == Approx(0.013807927327).epsilon(1e-9));
  CHECK(p.plan.layer_s * p.plan.layers == Approx(1.144188631).epsilon(1e-8));
  // The fifteen wait for GPU 0's attention: by cost::pass_wait_causes, the first turn's whole batch holds
  // 13.8 ms of attention against 4.5 and 4.2 ms of GEMMs against 0.4, so most of their wait is attention's.
  const WaitCauses w = pass_wait_causes(p.plan, false);
  CHECK(w.total_s() == Approx(p.plan.split.imbalance_s).epsilon(1e-12));
  CHECK(w.chunk_s == 0);
  // Per waiting GPU: attention 13.8079 - 4.4836 = 9.3243 ms, dense 4.2125 - 0.3745 = 3.8380 ms more.
  CHECK(w.attention_s / w.total_s() == Approx(9.3243 / (9.3243 + 3.8380)).epsilon(1e-3));
}

TEST_CASE("Quota scope: a pass whose slowest GPU runs a cut request -> its waits are the chunk's", "[unit]") {
  const Pass p = form_and_plan("pass");
  const WaitCauses w = pass_wait_causes(p.plan, true);
  CHECK(w.chunk_s == Approx(p.plan.split.imbalance_s).epsilon(1e-12));
  CHECK(w.attention_s == 0);
  CHECK(w.dense_s == 0);
  CHECK(w.chunk_s > 0);
}

TEST_CASE("Quota scope: batch_limits -> pass covers the model's layers, layer one, fifo no quota", "[unit]") {
  const config::ModelSpec m = sim::testing::pinned_ds660b();
  config::EngineSpec e;
  e.max_pass_tokens = 16384;
  config::PolicyConfig p;
  CHECK(p.batching == "fifo");     // the default: the paper's files and systems ask for the quota
  CHECK(p.quota_scope == "pass");  // the default scope once they do
  CHECK(batch_limits(p, e, m).quota_s == std::numeric_limits<double>::infinity());
  p.batching = "quota";
  BatchLimits l = batch_limits(p, e, m);
  CHECK(l.quota_s == 0.3);
  CHECK(l.quota_layers == 61);
  CHECK(l.max_tokens == 16384);
  p.quota_scope = "layer";
  CHECK(batch_limits(p, e, m).quota_layers == 1);
  p.batching = "fifo";
  l = batch_limits(p, e, m);
  CHECK(l.quota_s == std::numeric_limits<double>::infinity());
  e.max_pass_tokens = 0;
  CHECK(batch_limits(p, e, m).max_tokens == std::numeric_limits<double>::infinity());
}

TEST_CASE("Quota scope: what closes a batch -> quota, the largest pass, HBM or nothing", "[unit]") {
  const config::ModelSpec m = sim::testing::pinned_ds660b();
  const config::HardwareSpec hw = sim::testing::pinned_hopper();
  const config::EngineSpec e = sim::testing::pinned_engine();
  BatchLimits l;
  l.quota_s = 0.3;
  l.quota_layers = 61;
  {
    QuotaBatchFormer f(m, hw, e, l);
    f.offer(kTypical);
    CHECK(f.closed_by() == BatchBound::kNone);
    f.offer(kTypical);
    f.offer(kTypical);  // 410 ms: cut by the quota
    CHECK(f.closed_by() == BatchBound::kQuota);
  }
  {
    BatchLimits t = l;
    t.max_tokens = 500;  // the second typical turn is cut to 71 tokens by the pass's size, within the quota
    QuotaBatchFormer f(m, hw, e, t);
    f.offer(kTypical);
    CHECK(f.offer(kTypical).bsz == 71);
    CHECK(f.closed_by() == BatchBound::kTokens);
  }
  {
    BatchLimits h = l;
    h.hbm_bytes_per_token = 1;
    h.hbm_bytes = 40000;  // one typical turn's 33,197 tokens fit, two do not
    QuotaBatchFormer f(m, hw, e, h);
    f.offer(kTypical);
    CHECK(f.offer(kTypical).verdict == Verdict::kRejected);
    CHECK(f.closed_by() == BatchBound::kHbm);
  }
}

}  // namespace sim::cost
