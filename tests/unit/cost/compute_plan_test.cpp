// The EP exchange (sim/cost/compute_model.h: prefill_exchange, decode_exchange) and the work plans of a
// prefill pass and a decode step (sim/cost/compute_plan.h), for ds660b on hopper-8x400g against hand
// computations.
#include "sim/cost/compute_plan.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/unit/paper_files.h"

namespace sim::cost {
namespace {

using config::HardwareSpec;
using config::ModelSpec;

using testing::pinned_ds660b;
using testing::pinned_engine;
using testing::pinned_hopper;
using testing::real_model;

// One (token, destination) pair of ds660b moves 7168 x (1.03125 + 2) = 21,728 bytes (dispatch + combine),
// in 58 of the 61 layers: 21,728 x 58 / 61 = 20,659.41 bytes per layer averaged over the layers.
constexpr double kPairBytesPerLayer = 21728.0 * 58 / 61;

// ds660b routes each token to 4 of its 8 expert groups. At EP16 (2 nodes of 4 groups) a node is missed only
// when all 4 groups lie on the other, 1 in C(8, 4) = 70: a token reaches 2 x 69/70 nodes, the remote one of
// them 69/70 of the time.
constexpr double kRemoteEp16 = 69.0 / 70;

// pinned_hopper()'s rates (tests/unit/paper_files.h): prefill attention 6.400086e14 FLOP/s, DSA indexer
// 1.979e15 x 0.063 = 1.24677e14, decode attention 4.100488e14, FP8 GEMM 1.2800172e15, weight reads
// 2.66794e12 B/s, KV reads 2.999925e12 B/s.
using testing::kRda;
using testing::kRgemm;
using testing::kRidx;
using testing::kRpa;
using testing::kRwb;

}  // namespace

TEST_CASE("EP exchange: ds660b prefill at EP16 over 2 nodes -> 2 nodes hit, half of them remote", "[unit]") {
  const ModelSpec m = pinned_ds660b();
  // 16 GPUs, 8 per node: 2 nodes. A token goes to 2 x 69/70 nodes (its 4 groups of 8), 1 of 2 remote: CNIC
  // bytes = t x 20,659.41 x 69/70; then over NVLink to its 8 experts, 7/8 of them off the receiving GPU: t x
  // 20,659.41 x 8 x 7/8.
  //   t = 429: CNIC 8,736,274.15 B, NVLink 62,040,207.74 B per GPU per layer.
  // A model that sends a token to each expert over the CNIC (8 x 1/2) would give 4x the CNIC bytes; one
  // that forgets the MoE layers' share 58/61 gives 5% more.
  const Exchange x = prefill_exchange(m, 429, EpGroup{16, 8});
  CHECK(x.cnic == Approx(429 * kPairBytesPerLayer * kRemoteEp16).epsilon(1e-12));
  CHECK(x.cnic == Approx(8736274.15).epsilon(1e-9));
  CHECK(x.nvlink == Approx(429 * kPairBytesPerLayer * 7).epsilon(1e-12));
  CHECK(x.nvlink == Approx(62040207.74).epsilon(1e-9));
  // EP32 on 4 nodes of 2 groups: a node is missed with C(6, 4) / C(8, 4) = 15/70, 4 x 55/70 nodes hit, 3/4
  // remote: 2.357 pairs' bytes per token.
  CHECK(prefill_exchange(m, 429, EpGroup{32, 8}).cnic ==
        Approx(429 * kPairBytesPerLayer * 4 * 55 / 70 * 3 / 4).epsilon(1e-12));
  // EP64 on 8 nodes of one group: 4 nodes hit, 7/8 remote: 3.5 pairs.
  CHECK(prefill_exchange(m, 429, EpGroup{64, 8}).cnic ==
        Approx(429 * kPairBytesPerLayer * 3.5).epsilon(1e-12));
  // Without group-limited routing, min(max_nodes_per_token 4, nodes, active_experts 8): at EP16 2 nodes (1
  // remote pair), at EP32 4 (3 pairs); without the node limit either, the token reaches min(8, 8) = 8 nodes
  // of EP64: 7 pairs.
  ModelSpec ungrouped = m;
  ungrouped.expert_groups = 0;
  CHECK(prefill_exchange(ungrouped, 429, EpGroup{16, 8}).cnic ==
        Approx(429 * kPairBytesPerLayer).epsilon(1e-12));
  CHECK(prefill_exchange(ungrouped, 429, EpGroup{32, 8}).cnic ==
        Approx(429 * kPairBytesPerLayer * 3).epsilon(1e-12));
  ModelSpec unlimited = m;
  unlimited.max_nodes_per_token = 0;
  CHECK(prefill_exchange(unlimited, 429, EpGroup{64, 8}).cnic ==
        Approx(429 * kPairBytesPerLayer * 7).epsilon(1e-12));
  // One node: nothing crosses a CNIC; NVLink as above.
  const Exchange one = prefill_exchange(m, 429, EpGroup{8, 8});
  CHECK(one.cnic == 0);
  CHECK(one.nvlink == Approx(429 * kPairBytesPerLayer * 7).epsilon(1e-12));
  // A group smaller than a node: 4 GPUs, 3/4 of the 8 experts off the GPU: 6 pairs over NVLink.
  CHECK(prefill_exchange(m, 429, EpGroup{4, 8}).nvlink ==
        Approx(429 * kPairBytesPerLayer * 6).epsilon(1e-12));
  // No tokens, or a dense model: no exchange.
  CHECK(prefill_exchange(m, 0, EpGroup{16, 8}).cnic == 0);
  const Exchange dense = prefill_exchange(real_model("qwen32b"), 429, EpGroup{16, 8});
  CHECK(dense.cnic == 0);
  CHECK(dense.nvlink == 0);
}

TEST_CASE("EP exchange: ds660b decode at EP32 over 4 nodes -> 8 experts per token, 3/4 of them remote",
          "[unit]") {
  const ModelSpec m = pinned_ds660b();
  // 64 requests, 32 GPUs on 4 nodes: each token goes to its 8 experts directly. Per layer:
  //   64 x 8 x 20,659.41 = 10,577,617.84 B; CNIC x 3/4 = 7,933,213.38 B; NVLink: of the 1/4 on its own node,
  //   7/8 off its own GPU: x 1/4 x 7/8 = 2,313,853.90 B.
  // Per step over 61 layers: 64 x 8 x 21,728 x 58 x 3/4 = 483,926,016 B over the CNIC (7.56 MB per request).
  // A model that routes decode through nodes like prefill (min(4, 4, 8) = 4 nodes, not 8 experts) gives
  // half the CNIC bytes.
  const Exchange x = decode_exchange(m, 64, EpGroup{32, 8});
  CHECK(x.cnic == Approx(64 * 8 * kPairBytesPerLayer * 3 / 4).epsilon(1e-12));
  CHECK(x.cnic == Approx(7933213.38).epsilon(1e-9));
  CHECK(x.nvlink == Approx(64 * 8 * kPairBytesPerLayer / 4 * 7 / 8).epsilon(1e-12));
  CHECK(x.nvlink == Approx(2313853.90).epsilon(1e-9));
  CHECK(61 * x.cnic == Approx(483926016.0).epsilon(1e-12));
  // One node: no CNIC bytes; every expert off the GPU goes over NVLink: 64 x 8 x 20,659.41 x 7/8.
  const Exchange one = decode_exchange(m, 64, EpGroup{8, 8});
  CHECK(one.cnic == 0);
  CHECK(one.nvlink == Approx(64 * 8 * kPairBytesPerLayer * 7 / 8).epsilon(1e-12));
  CHECK(decode_exchange(m, 0, EpGroup{32, 8}).cnic == 0);
  const Exchange dense = decode_exchange(real_model("qwen32b"), 64, EpGroup{32, 8});
  CHECK(dense.cnic == 0);
  CHECK(dense.nvlink == 0);
}

TEST_CASE("Prefill pass: a 2-GPU group with unequal attention -> the slowest GPU's part + the shared experts",
          "[unit]") {
  const ModelSpec m = pinned_ds660b();
  HardwareSpec hw = pinned_hopper();
  // GPU 0: {32768 cached, 429 new}; GPU 1: {0, 429}. EP group: 16 GPUs on 2 nodes. Per layer, by hand:
  //   attention 0: main 278,528 x 2048 x 429 = 244,712,472,576 FLOPs / 6.400086e14 = 382.3581 us; indexer
  //                16,384 x (32,768 x 429 + 429 x 430 / 2) = 231,828,799,488 FLOPs / 1.24677e14
  //                = 1,859.4352 us; 2,241.7933 us
  //   attention 1: main 278,528 x 429 x 430 / 2 = 25,690,030,080 FLOPs / 6.400086e14 = 40.1401 us; indexer
  //                16,384 x 92,235 = 1,511,178,240 FLOPs / 1.24677e14 = 12.1207 us; 52.2609 us
  //   dense (429 tokens, each GPU): 2 x 279,385,150.95 x 429 = 239,712,459,515.8 FLOPs / 1.2800172e15
  //                = 187.2728 us (above the weight reads, 294,576,610.62 B / 2.66794e12 = 110.4135 us)
  //   own 0 = 2,429.0661 us, own 1 = 239.5337 us
  //   shared experts at the group's average 858 / 2 = 429 tokens: 3432 pairs over the GPU's 16 experts:
  //                704,643,072 B / 2.66794e12 = 264.1150 us (FLOPs 236.2 us) x 58/61 = 251.1258 us
  //   layer_s = 2,429.0661 + 251.1258 = 2,680.1919 us;
  //   NVLink 62,040,207.74 B / 160e9 = 387.75 us < layer_s: it hides under the compute.
  //   layer_work 0 = 2,680.1919 us x 1.979e15, layer_work 1 = (239.5337 + 251.1258) us = 490.6595 us
  //   x 1.979e15.
  //   exchange_bytes = prefill_exchange(429).cnic = 429 x 20,659.41 x 69/70 = 8,736,274.15 B.
  // A pass paced by the mean GPU, or charging each GPU its own experts (not the average's), or taking the
  // exchange at the per-GPU rather than the average token count fails one of these.
  const double att0 = 244712472576.0 / kRpa + 231828799488.0 / kRidx;
  const double att1 = 25690030080.0 / kRpa + 1511178240.0 / kRidx;
  const double dense = 2 * (17042494208.0 / 61) * 429 / kRgemm;
  const double shared = 704643072.0 / kRwb * 58 / 61;
  const PassPlan p = prefill_pass(m, hw, pinned_engine(), {{{32768, 429}}, {{0, 429}}}, EpGroup{16, 8});
  CHECK(p.layers == 61);
  CHECK(p.tokens == 858);
  REQUIRE(p.attention_s.size() == 2);
  CHECK(p.attention_s[0] == Approx(att0).epsilon(1e-12));
  CHECK(p.attention_s[1] == Approx(att1).epsilon(1e-12));
  CHECK(p.layer_s == Approx(att0 + dense + shared).epsilon(1e-12));
  CHECK(p.layer_s == Approx(2680.1919e-6).epsilon(1e-7));
  REQUIRE(p.layer_work.size() == 2);
  CHECK(p.layer_work[0] == Approx((att0 + dense + shared) * 1.979e15).epsilon(1e-12));
  CHECK(p.layer_work[1] == Approx((att1 + dense + shared) * 1.979e15).epsilon(1e-12));
  CHECK(p.layer_work[1] == Approx(490.6595e-6 * 1.979e15).epsilon(1e-7));
  CHECK(p.exchange_bytes == Approx(429 * kPairBytesPerLayer * kRemoteEp16).epsilon(1e-12));
  CHECK(p.exchange_bytes == Approx(8736274.15).epsilon(1e-9));

  // NVLink-bound: at 1 MB/s the 62,040,207.74 B per layer take 62.040208 s, and every GPU's layer with it.
  hw.nvlink_bw_Bps = 1e6;
  const PassPlan slow = prefill_pass(m, hw, pinned_engine(), {{{32768, 429}}, {{0, 429}}}, EpGroup{16, 8});
  CHECK(slow.layer_s == Approx(62.04020774).epsilon(1e-9));
  CHECK(slow.layer_work[0] == Approx(62.04020774 * 1.979e15).epsilon(1e-9));
  CHECK(slow.layer_work[1] == Approx(62.04020774 * 1.979e15).epsilon(1e-9));
  // NVLink not modelled (0): the compute alone.
  hw.nvlink_bw_Bps = 0;
  CHECK(prefill_pass(m, hw, pinned_engine(), {{{32768, 429}}, {{0, 429}}}, EpGroup{16, 8}).layer_s ==
        Approx(2680.1919e-6).epsilon(1e-7));
}

TEST_CASE("Prefill pass: one GPU -> its layer time, a group without new tokens -> nothing", "[unit]") {
  const ModelSpec m = pinned_ds660b();
  const HardwareSpec hw = pinned_hopper();
  // {30000, 400} and {0, 1000} on one GPU at EP16: 3.5715121 ms (compute_model_test.cpp, "Layer time");
  // NVLink 1400 x 20,659.41 x 7 = 202,462,216.4 B / 160e9 = 1.2654 ms is less.
  const PassPlan one = prefill_pass(m, hw, pinned_engine(), {{{30000, 400}, {0, 1000}}}, EpGroup{16, 8});
  CHECK(one.layer_s == Approx(3.5715121e-3).epsilon(1e-7));
  CHECK(one.layer_work[0] == Approx(3.5715121e-3 * 1.979e15).epsilon(1e-7));
  CHECK(one.exchange_bytes == Approx(1400 * kPairBytesPerLayer * kRemoteEp16).epsilon(1e-12));
  const PassPlan idle = prefill_pass(m, hw, pinned_engine(), {{}, {{5000, 0}}}, EpGroup{16, 8});
  CHECK(idle.tokens == 0);
  CHECK(idle.layer_s == 0);
  CHECK(idle.layer_work == std::vector<double>{0, 0});
  CHECK(idle.exchange_bytes == 0);
}

TEST_CASE("Prefill pass: a dense model on a tensor-parallel group of 4 -> every GPU a quarter of the chunk",
          "[unit]") {
  // A dense model of 2 layers, 1e9 parameters each, FP8, sharded over 4 GPUs (no replicated part); 8 heads of
  // 128. One chunk of 4,096 new tokens, queued on the group's first GPU. Per layer, by hand:
  //   attention 2 x 8 x 256 x (4,096 x 4,097 / 2) = 34,368,126,976 FLOPs / 6.400086e14 = 53.6995 us, a
  //   quarter on each GPU: 13.4249 us; GEMMs: 1,024 tokens per GPU x 2 x 1e9 = 2.048e12 FLOPs / 1.2800172e15
  //   = 1,599.9785 us (above the shard's weights, 2.5e8 B / 2.66794e12 = 93.7053 us); layer 1,613.4034 us on
  //   every GPU. In lock-step with the chunk on one GPU (DP attention) it would take 6,453.6134 us, the
  //   others waiting.
  ModelSpec m;
  m.layers = 2;
  m.active_params = m.total_params = 2e9;
  m.replicated_params = 0;
  m.weight_bytes_per_param = 1;
  m.weight_shards = 4;
  m.heads = 8;
  m.qk_head_dim = m.v_head_dim = 128;
  m.prefill_mha = true;
  m.prefill_qk_head_dim = m.prefill_v_head_dim = 128;
  m.main_kv_bytes_per_token_layer = 4096;
  const HardwareSpec hw = pinned_hopper();
  const PassPlan p = prefill_pass(m, hw, pinned_engine(), {{{0, 4096}}, {}, {}, {}}, EpGroup{4, 8});
  CHECK(p.layer_s == Approx(1613.4034e-6).epsilon(1e-7));
  CHECK(p.tokens == 4096);
  for (int i = 0; i < 4; ++i) {
    CHECK(p.attention_s[i] == Approx(13.4249e-6).epsilon(1e-5));
    CHECK(p.layer_work[i] == Approx(1613.4034e-6 * 1.979e15).epsilon(1e-7));
  }
  CHECK(p.split.imbalance_s == 0);
  // Spread over the group's queues instead, the same tokens take the same pass.
  const PassPlan spread =
      prefill_pass(m, hw, pinned_engine(), {{{0, 2048}}, {{0, 2048}}, {}, {}}, EpGroup{4, 8});
  CHECK(spread.layer_s <
        p.layer_s);  // fewer attention pairs: two chunks of 2,048 attend less than one of 4,096
  CHECK(spread.layer_s > 1599.9785e-6);
}

TEST_CASE("Decode step plan: ds660b 64 requests at EP32 -> compute step, CNIC bytes, NVLink bound when slow",
          "[unit]") {
  const ModelSpec m = pinned_ds660b();
  HardwareSpec hw = pinned_hopper();
  // 64 requests of 32,000 tokens at EP32 (4 nodes), by hand (compute_model_test.cpp, "Decode step: ds660b"):
  //   attention max(2,226,940,542,976 / 4.100488e14 + 2,046,820,352,000 / 1.24677e14 [indexer],
  //                 21,735,473,152 / 2.999925e12) = max(21.847900, 7.245339) = 21.847900 ms;
  //   61 x (dense 294,576,610.62 / 2.66794e12 + experts 8 x 44,040,192 / 2.66794e12 x 58/61) = 14.394560 ms;
  //   step = 36.242460 ms.
  //   NVLink: 61 x 2,313,853.90 = 141,145,088 B per step / 160e9 = 0.88216 ms: hidden.
  //   CNIC per step: 61 x 7,933,213.38 = 483,926,016 B.
  const StepPlan s = decode_step(m, hw, pinned_engine(), 64, 64 * 32000.0, EpGroup{32, 8});
  const double compute = 2226940542976.0 / kRda + 2046820352000.0 / kRidx +
                         61 * ((38403822336.0 - 20434649088.0) / 61 / kRwb + 352321536.0 / kRwb * 58 / 61);
  CHECK(s.step_s == Approx(compute).epsilon(1e-12));
  CHECK(s.step_s == Approx(36.242460e-3).epsilon(1e-7));
  CHECK(s.work == Approx(compute * 1.979e15).epsilon(1e-12));
  CHECK(s.exchange_bytes == Approx(483926016.0).epsilon(1e-12));
  // NVLink at 1 MB/s: 141,145,088 B take 141.145088 s, the step with them. A model that forgets the
  // layers (one layer's bytes) would give 2.31 s.
  hw.nvlink_bw_Bps = 1e6;
  const StepPlan slow = decode_step(m, hw, pinned_engine(), 64, 64 * 32000.0, EpGroup{32, 8});
  CHECK(slow.step_s == Approx(141.145088).epsilon(1e-9));
  CHECK(slow.work == Approx(141.145088 * 1.979e15).epsilon(1e-9));
  CHECK(slow.exchange_bytes == Approx(483926016.0).epsilon(1e-12));
  // One node: no CNIC bytes. No requests: nothing.
  CHECK(decode_step(m, pinned_hopper(), pinned_engine(), 64, 64 * 32000.0, EpGroup{8, 8}).exchange_bytes ==
        0);
  const StepPlan none = decode_step(m, pinned_hopper(), pinned_engine(), 0, 0, EpGroup{32, 8});
  CHECK(none.step_s == 0);
  CHECK(none.work == 0);
  CHECK(none.exchange_bytes == 0);
}

TEST_CASE(
    "Decode group step: one GPU of an EP32 group holds 64 requests -> its own part, the group's experts and "
    "exchange at the group's average batch",
    "[unit]") {
  const ModelSpec m = pinned_ds660b();
  const HardwareSpec hw = pinned_hopper();
  const EpGroup ep{32, 8};
  // Its own part (by hand, "Decode step plan" above): attention 21.847900 ms + 61 x dense 294,576,610.62 B /
  // 2.66794e12 B/s = 21.847900 + 6.735224 = 28.583124 ms.
  const double own =
      2226940542976.0 / kRda + 2046820352000.0 / kRidx + (38403822336.0 - 20434649088.0) / kRwb;
  CHECK(decode_own_s(m, hw, pinned_engine(), 64, 64 * 32000.0, ep) == Approx(own).epsilon(1e-12));
  CHECK(own == Approx(28.583124e-3).epsilon(1e-6));
  CHECK(decode_own_s(m, hw, pinned_engine(), 0, 0, ep) == 0);
  // The group holds those 64 requests alone: 2 per GPU on average. Experts: 2 x 8 = 16 (token, expert)
  // pairs on each GPU touch all 8 of its experts, so they read the same 8 x 44,040,192 B as at 64 per GPU:
  // 58 x 352,321,536 / 2.66794e12 = 7.659336 ms; step = 36.242460 ms. The exchange carries the group's
  // average, 2 tokens: 483,926,016 x 2 / 64 = 15,122,688 B per step over each CNIC. A GPU-alone model would
  // give this GPU 483,926,016 B and the 31 others none.
  const StepPlan g = decode_group_step(m, hw, pinned_engine(), own, 64, ep);
  CHECK(g.step_s == Approx(own + 58 * 352321536.0 / kRwb).epsilon(1e-12));
  CHECK(g.step_s == Approx(36.242460e-3).epsilon(1e-7));
  CHECK(g.exchange_bytes == Approx(15122688.0).epsilon(1e-12));
  CHECK(g.work == Approx(g.step_s * 1.979e15).epsilon(1e-12));
  // Lock-step: a second GPU with one short request steps at the slowest GPU's pace, not at its own.
  const double own_short = decode_own_s(m, hw, pinned_engine(), 1, 1000, ep);
  CHECK(own_short < own / 2);
  const StepPlan both = decode_group_step(m, hw, pinned_engine(), std::max(own, own_short), 65, ep);
  CHECK(both.step_s == Approx(g.step_s).epsilon(1e-12));
  // Every GPU at 64: the uniform step of "Decode step plan" above.
  CHECK(decode_group_step(m, hw, pinned_engine(), own, 64 * 32, ep).step_s ==
        Approx(36.242460e-3).epsilon(1e-7));
  CHECK(decode_group_step(m, hw, pinned_engine(), own, 64 * 32, ep).exchange_bytes ==
        Approx(483926016.0).epsilon(1e-12));
  CHECK(decode_group_step(m, hw, pinned_engine(), 0, 0, ep).step_s == 0);
}

}  // namespace sim::cost
