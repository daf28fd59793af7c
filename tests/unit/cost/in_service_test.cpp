// The in-service mechanisms of an engine (models/engine/README.md, "In-service costs"), each against a hand
// computation: the prefill's two streams stage by stage (sim/cost/micro_batch_schedule.h), the small kernels
// per token, the launches per layer and micro-batch. A wrong scaling (per token vs per layer and micro-batch,
// the streams side by side vs stage by stage) fails them.
#include <catch2/catch.hpp>

#include "sim/cost/compute_plan.h"
#include "sim/cost/micro_batch_schedule.h"
#include "tests/unit/paper_files.h"

namespace sim::cost {
namespace {

TEST_CASE("Two streams: one and two layers traced by hand -> 15 and 29", "[unit]") {
  // A = 1, S = 0.5, M = 2, D = 3, K = 4. Layer 0: ATTN(mb1) [0, 1]; DISPATCH(mb1) [1, 4]; ATTN(mb0) [1, 2];
  // DISPATCH(mb0) [4, 7] (the stream is busy until 4); MLP(mb1) [4, 6] (its dispatch); MLP(mb0) [7, 9];
  // COMBINE(mb1) [7, 11] (the stream until 7); SHARED(mb1) [9, 9.5]. The end: COMBINE(mb0) [11, 15] and
  // SHARED(mb0) [9.5, 10]: 15.
  const MicroBatchStages s{1, 0.5, 2, 3, 4};
  CHECK(two_stream_pass_s(s, 1) == 15);
  // Layer 1 from there: COMBINE(mb0) of layer 0 [11, 15]; ATTN(mb1) [11, 12] (its combine ended at 11);
  // SHARED(mb0) of layer 0 [12, 12.5]; DISPATCH(mb1) [15, 18]; ATTN(mb0) [15, 16] (its combine);
  // DISPATCH(mb0) [18, 21]; MLP(mb1) [18, 20]; MLP(mb0) [21, 23]; COMBINE(mb1) [21, 25]; SHARED(mb1)
  // [23, 23.5]; the end: COMBINE(mb0) [25, 29], SHARED(mb0) [23.5, 24]: 29.
  CHECK(two_stream_pass_s(s, 2) == 29);
}

TEST_CASE("Two streams: the steady layer -> the busier stream, plus each wait the other imposes", "[unit]") {
  // Compute only: the stages back to back, 2 (A + S + M) per layer.
  CHECK(two_stream_pass_s({1, 0.5, 2, 0, 0}, 41) - two_stream_pass_s({1, 0.5, 2, 0, 0}, 40) == 7);
  // Communication only: COMBINE(mb0), DISPATCH(mb1), DISPATCH(mb0), COMBINE(mb1) back to back: 2 (D + K).
  CHECK(two_stream_pass_s({0, 0, 0, 3, 4}, 41) - two_stream_pass_s({0, 0, 0, 3, 4}, 40) == 14);
  // Both, D <= A and D <= M: the next ATTN(mb1) waits for COMBINE(mb1), K after MLP(mb1) ends, while the
  // compute stream has M + S to run; ATTN(mb0) waits K after that for COMBINE(mb0), with A + S to run.
  // A = 5, S = 1, M = 3, D = 2, K = 6.5: 2 x 9 + (6.5 - 4) + (6.5 - 6) = 21, against 18 for the compute alone
  // and 17 for the communication: side by side (the busier stream) would be 3 short.
  const MicroBatchStages both{5, 1, 3, 2, 6.5};
  CHECK(two_stream_pass_s(both, 41) - two_stream_pass_s(both, 40) == Approx(21).epsilon(1e-12));
  // Every pass lies between its busier stream and both streams in series.
  for (const MicroBatchStages& t :
       {MicroBatchStages{1, 0.5, 2, 3, 4}, both, MicroBatchStages{2, 0, 7, 1, 1}}) {
    const double compute = 2 * (t.attention + t.shared + t.experts), comm = 2 * (t.dispatch + t.combine);
    const double pass = two_stream_pass_s(t, 61);
    CHECK(pass >= 61 * std::max(compute, comm));
    CHECK(pass <= 61 * (compute + comm));
  }
}

TEST_CASE("Small kernels and launches: per token, and per layer and micro-batch", "[unit]") {
  const config::ModelSpec m = testing::pinned_ds660b();
  const config::HardwareSpec hw = testing::pinned_hopper();
  const EpGroup ep{32, 8};
  config::EngineSpec e = testing::pinned_engine();
  e.ep_overlap = config::EpOverlap::kNone;  // one micro-batch, the parts in series: each shows
  const auto step = [&](const config::EngineSpec& x, int batch) {
    return decode_step(m, hw, x, batch, batch * 4096.0, ep).step_s;
  };
  config::EngineSpec small = e;
  small.decode_token_s = 1e-6;
  // 61 layers x the batch's tokens x 1 us: 16 requests 0.976 ms, 64 requests 3.904 ms.
  CHECK(step(small, 16) - step(e, 16) == Approx(61 * 16 * 1e-6).epsilon(1e-9));
  CHECK(step(small, 64) - step(e, 64) == Approx(61 * 64 * 1e-6).epsilon(1e-9));
  config::EngineSpec launch = e;
  launch.decode_layer_overhead_s = 20e-6;
  // 61 layers x 20 us, whatever the batch.
  CHECK(step(launch, 16) - step(e, 16) == Approx(61 * 20e-6).epsilon(1e-9));
  CHECK(step(launch, 64) - step(e, 64) == Approx(61 * 20e-6).epsilon(1e-9));
  // Two micro-batches: the launches twice per layer, the small kernels once per token. 128 requests of 32K
  // tokens per GPU: the attention binds (above the exchange), so both add in full.
  const auto big = [&](config::EngineSpec x) {
    x.ep_overlap = config::EpOverlap::kTwoMicroBatches;
    return decode_step(m, hw, x, 128, 128 * 32768.0, ep).step_s;
  };
  CHECK(big(launch) - big(e) == Approx(61 * 2 * 20e-6).epsilon(1e-9));
  CHECK(big(small) - big(e) == Approx(61 * 128 * 1e-6).epsilon(1e-9));
  // Prefill: 2 GPUs of one pass group alone (no exchange), 429 and 1000 new tokens; the small kernels of the
  // slower GPU's 1000 tokens per layer.
  config::EngineSpec psmall = e;
  psmall.prefill_token_s = 1e-6;
  const EpGroup one{1, 8};
  const std::vector<std::vector<Chunk>> gpus = {{{0, 429}}, {{0, 1000}}};
  CHECK(prefill_pass(m, hw, psmall, gpus, one).layer_s - prefill_pass(m, hw, e, gpus, one).layer_s ==
        Approx(1000 * 1e-6).epsilon(1e-9));
  CHECK(token_kernels_s(psmall, Phase::kPrefill, 1000) == Approx(1e-3).epsilon(1e-12));
  CHECK(token_kernels_s(psmall, Phase::kDecode, 1000) == 0);
}

}  // namespace
}  // namespace sim::cost
