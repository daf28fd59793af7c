// The fixed costs of a layer and its overlap with the EP exchange (sim/cost/compute_model.h: ep_latency_s;
// sim/cost/compute_plan.h: the three overlap modes), for ds660b on hopper-8x400g with DeepSeek's kernels,
// against hand computations.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/cost/compute_plan.h"
#include "tests/unit/paper_files.h"

namespace sim::cost {
namespace {

using config::EngineSpec;
using config::EpOverlap;
using config::HardwareSpec;
using config::ModelSpec;

// pinned_hopper()'s rates (tests/unit/paper_files.h): prefill attention 6.400086e14 FLOP/s, indexer
// 1.24677e14, decode attention 4.100488e14, FP8 GEMM 1.2800172e15, weight reads 2.66794e12 B/s.
using testing::kMoeShare;
using testing::kRda;
using testing::kRgemm;
using testing::kRidx;
using testing::kRpa;
using testing::kRwb;

// A table of round numbers: dispatch 10 and 30 us, combine 20 and 40 us, at EP8 and EP32; prefill the same
// plus 1 us each.
config::EpLatencyTable round_table() {
  config::EpLatencyTable t;
  t.ep_gpus = {8, 32};
  t.decode_dispatch_s = {10e-6, 30e-6};
  t.decode_combine_s = {20e-6, 40e-6};
  t.prefill_dispatch_s = {11e-6, 31e-6};
  t.prefill_combine_s = {21e-6, 41e-6};
  return t;
}

EngineSpec with_overlap(EpOverlap mode) {
  EngineSpec e = testing::pinned_engine();
  e.ep_overlap = mode;
  return e;
}

}  // namespace

TEST_CASE("EP latency: a table of two sizes -> its points, linear in log2 between them, clamped beyond",
          "[unit]") {
  EngineSpec e;
  e.ep_latency = round_table();
  // EP8: 10 + 20 = 30 us; EP32: 30 + 40 = 70 us; EP16 lies halfway in log2 (3, 4, 5): 50 us. EP4 and EP64
  // take the ends; a group of one GPU has no exchange. A table read linearly in the size would give 43.3 us
  // at EP16.
  CHECK(ep_latency_s(e, Phase::kDecode, 8) == Approx(30e-6).epsilon(1e-12));
  CHECK(ep_latency_s(e, Phase::kDecode, 32) == Approx(70e-6).epsilon(1e-12));
  CHECK(ep_latency_s(e, Phase::kDecode, 16) == Approx(50e-6).epsilon(1e-12));
  CHECK(ep_latency_s(e, Phase::kDecode, 4) == Approx(30e-6).epsilon(1e-12));
  CHECK(ep_latency_s(e, Phase::kDecode, 64) == Approx(70e-6).epsilon(1e-12));
  CHECK(ep_latency_s(e, Phase::kDecode, 1) == 0);
  // The prefill columns are their own.
  CHECK(ep_latency_s(e, Phase::kPrefill, 16) == Approx(52e-6).epsilon(1e-12));
  // No table: no latency.
  CHECK(ep_latency_s(EngineSpec{}, Phase::kDecode, 32) == 0);
}

TEST_CASE("EP latency: the shipped table plus dpsim's exchange bytes -> DeepEP's published low-latency times",
          "[unit]") {
  // DeepEP's README of 2025-02-24 (low-latency kernels, pure RDMA, H800, 128 tokens per GPU, top-8, hidden
  // 7168): dispatch + combine 163 + 318, 173 + 329, 182 + 350, 186 + 353, 192 + 369, 194 + 360 us at EP 8 to
  // 256 (both shipped engines' tables, derived from it). dpsim's own path to
  // the same time: the bytes decode_exchange() puts on a GPU's CNIC per MoE layer (or, in one node, on
  // NVLink) at the link's rate, plus ep_latency_s(). An exchange that forgot the FP8 scales, the remote share
  // or the BF16 combine, or a latency table read at the wrong size, misses these by microseconds or more.
  const HardwareSpec hw = testing::real_hardware("hopper-8x400g");
  const ModelSpec m = testing::pinned_ds660b();
  const std::vector<std::pair<int, double>> published = {{8, 481e-6},  {16, 502e-6},  {32, 532e-6},
                                                         {64, 539e-6}, {128, 561e-6}, {256, 554e-6}};
  for (const char* name : {"dualpath-paper", "deepseek-v3-production"}) {
    const EngineSpec e = testing::real_engine(name);
    for (const auto& [ep, total] : published) {
      const Exchange x = decode_exchange(m, 128, EpGroup{ep, 8});
      const double bytes_s =
          ep == 8 ? x.nvlink / kMoeShare / hw.nvlink_bw_Bps : x.cnic / kMoeShare / hw.cnic_bw_Bps;
      INFO(name << " EP" << ep);
      CHECK(bytes_s + ep_latency_s(e, Phase::kDecode, ep) == Approx(total).margin(0.5e-6));
    }
  }
}

TEST_CASE("Decode step: ds660b, 64 requests of 32,000 tokens per GPU at EP32 -> each overlap mode by hand",
          "[unit]") {
  const ModelSpec m = testing::pinned_ds660b();
  const EpGroup ep{32, 8};
  // compute_plan_test.cpp ("Decode step plan"), one micro-batch: attention 21.847900 ms; dense weights
  // 294,576,610.62 B per layer (memory-bound at 64 and at 32 tokens); experts 8 x 44,040,192 B per MoE layer
  // (all 8 of a GPU's experts are hit at 32 tokens too): 58 x 352,321,536 / 2.66794e12 = 7.659336 ms; the
  // CNIC bytes 483,926,016 per step (9.678520 ms at 50 GB/s); NVLink 0.88216 ms.
  // Here: 40 + 50 us of latency per MoE layer at EP32 (round_table, its EP32 point), 10 us per layer and
  // micro-batch of fixed cost, 1 ms per step.
  const double attention = 2226940542976.0 / kRda + 2046820352000.0 / kRidx;
  const double dense = (38403822336.0 - 20434649088.0) / 61 / kRwb;
  const double experts = 58 * 352321536.0 / kRwb;
  const double bytes_s = 483926016.0 / 50e9, nvlink = 61 * 2313853.90 / 160e9, lat = 58 * 70e-6;
  auto step = [&](EpOverlap mode) {
    const HardwareSpec hw = testing::pinned_hopper();
    EngineSpec e = with_overlap(mode);
    e.ep_latency = round_table();
    e.decode_layer_overhead_s = 10e-6;
    e.decode_cpu_s = 1e-3;
    const double own = decode_own_s(m, hw, e, 64, 64 * 32000.0, ep);
    return decode_group_step(m, hw, e, own, 64 * 32, ep);
  };
  // ideal: the compute (one micro-batch, its fixed costs) against the latency and NVLink beside it. (NVLink's
  // and the CNIC's byte counts are rounded to 1e-10: 1e-9 where they enter.)
  const double compute1 = attention + 61 * (dense + 10e-6) + experts + 1e-3;
  CHECK(step(EpOverlap::kIdeal).step_s == Approx(compute1).epsilon(1e-12));
  CHECK(compute1 == Approx(37.852460e-3).epsilon(1e-6));
  // none: compute, then the latency, the bytes at the CNIC's rate and NVLink.
  CHECK(step(EpOverlap::kNone).step_s == Approx(compute1 + lat + bytes_s + nvlink).epsilon(1e-9));
  CHECK(step(EpOverlap::kNone).step_s == Approx(52.473137e-3).epsilon(1e-6));
  // two micro-batches of 32: each reads the dense weights and the experts and pays the fixed cost per layer;
  // the exchange of both (2 x latency + the bytes) hides behind that compute, but for one micro-batch's
  // exchange of one MoE layer (70 us + 9.678520 ms / 58 / 2).
  const double compute2 = attention + 61 * 2 * (dense + 10e-6) + 2 * experts + 1e-3;
  const double fill = 70e-6 + bytes_s / 58 / 2;
  CHECK(2 * lat + bytes_s < compute2);
  CHECK(step(EpOverlap::kTwoMicroBatches).step_s == Approx(compute2 + fill).epsilon(1e-12));
  CHECK(step(EpOverlap::kTwoMicroBatches).step_s == Approx(53.010456e-3).epsilon(1e-6));
  // The exchange's bytes are the same in every mode: only the time changes.
  CHECK(step(EpOverlap::kNone).exchange_bytes == Approx(483926016.0).epsilon(1e-12));
  CHECK(step(EpOverlap::kTwoMicroBatches).exchange_bytes == Approx(483926016.0).epsilon(1e-12));
}

TEST_CASE("Decode step: a dense model or a group of one GPU -> no micro-batches, no exchange latency",
          "[unit]") {
  // Qwen 32B has no MoE: nothing to overlap, so every mode gives the one-batch step, and the latency table
  // is not used; its fixed cost per layer is paid once. ds660b on a group of one GPU (no exchange) alike.
  const ModelSpec qwen = testing::real_model("qwen32b");
  std::vector<double> steps;
  for (EpOverlap mode : {EpOverlap::kIdeal, EpOverlap::kNone, EpOverlap::kTwoMicroBatches}) {
    const HardwareSpec hw = testing::pinned_hopper();
    EngineSpec e = with_overlap(mode);
    e.ep_latency = round_table();
    e.decode_layer_overhead_s = 10e-6;
    const EpGroup one{1, 8};
    steps.push_back(
        decode_group_step(qwen, hw, e, decode_own_s(qwen, hw, e, 16, 16 * 8000.0, one), 16, one).step_s);
  }
  CHECK(steps[1] == Approx(steps[0]).epsilon(1e-12));
  CHECK(steps[2] == Approx(steps[0]).epsilon(1e-12));
  const HardwareSpec bare = testing::pinned_hopper();
  const EngineSpec kernels = testing::pinned_engine();
  const EpGroup one{1, 8};
  const double without =
      decode_group_step(qwen, bare, kernels, decode_own_s(qwen, bare, kernels, 16, 16 * 8000.0, one), 16, one)
          .step_s;
  CHECK(steps[0] - without == Approx(64 * 10e-6).epsilon(1e-9));
}

TEST_CASE("Prefill pass: the 2-GPU group at EP16 -> each overlap mode by hand", "[unit]") {
  const ModelSpec m = testing::pinned_ds660b();
  const EpGroup ep{16, 8};
  // compute_plan_test.cpp ("Prefill pass: a 2-GPU group"): GPU 0 {32768 cached, 429 new}, GPU 1 {0, 429}.
  // attention 0 = 2,241.7933 us; dense at 429 tokens = 187.2728 us (FLOPs above the weight reads, 110.4135
  // us); experts at the average 429 tokens: 704,643,072 B / 2.66794e12 x 58/61 = 251.1258 us; CNIC bytes
  // 8,736,274.15 per GPU and layer (174.7255 us at 50 GB/s); NVLink 387.7513 us.
  // Here: 11 + 21 us at EP8 and 31 + 41 at EP32 (round_table): at EP16 52 us per MoE layer, 52 x 58/61 =
  // 49.4426 us per layer on average; 5 us of fixed cost per layer and micro-batch.
  const double att0 = 244712472576.0 / kRpa + 231828799488.0 / kRidx;
  const double dense429 = 2 * (17042494208.0 / 61) * 429 / kRgemm;
  const double dense_bytes =
      (17969173248.0 / 61) / kRwb;  // memory-bound at 214.5 tokens: 2 x 93.64 us of FLOPs is less
  const double experts = 704643072.0 / kRwb * kMoeShare;
  const double bytes_s = 8736274.15 / 50e9, nvlink = 62040207.74 / 160e9, lat = 52e-6 * kMoeShare;
  auto pass = [&](EpOverlap mode) {
    EngineSpec e = with_overlap(mode);
    e.ep_latency = round_table();
    e.prefill_layer_overhead_s = 5e-6;
    return prefill_pass(m, testing::pinned_hopper(), e, {{{32768, 429}}, {{0, 429}}}, ep);
  };
  const double compute1 = att0 + dense429 + experts + 5e-6;
  CHECK(pass(EpOverlap::kIdeal).layer_s == Approx(compute1).epsilon(1e-12));
  CHECK(pass(EpOverlap::kNone).layer_s == Approx(compute1 + lat + bytes_s + nvlink).epsilon(1e-9));
  // Two micro-batches of 214.5 tokens per GPU: the dense GEMMs become memory-bound and read the weights
  // twice; the experts (1,716 pairs on 16 experts) read theirs twice; the fixed cost twice. The two streams
  // run stage by stage (micro_batch_schedule.h): per micro-batch the combine K = (2 x 31 us x 58/61 + the
  // combine's 2 / 3.03125 of 174.7255 us) / 2 = 87.11 us and the shared experts S = the dense weight reads x
  // 44,040,192 x 58 / 17,042,494,208 (their share of the dense active parameters) = 16.51 us. Compute-bound:
  // each combine is shorter than the routed and shared experts between it and the next attention (K < M + S,
  // K < A + S), so the compute stream never waits and the layers take the compute, 61 x compute2. The last
  // layer's COMBINE(mb0) starts when its routed experts end, 2S before the compute does, and ends K - 2S =
  // 54.1 us after it: the pass's drain, spread over 61 layers.
  const double compute2 = att0 + 2 * dense_bytes + 2 * experts + 2 * 5e-6;
  const double combine = (2 * 31e-6 * kMoeShare + bytes_s * 2 / 3.03125) / 2;
  const double shared = dense_bytes * 44040192.0 * 58 / 17042494208.0;
  const PassPlan two = pass(EpOverlap::kTwoMicroBatches);
  CHECK(two.layer_s == Approx(compute2 + (combine - 2 * shared) / 61).epsilon(1e-12));
  CHECK(two.layer_s == Approx(2975.7574e-6).epsilon(1e-7));
  CHECK(two.layer_work[0] == Approx(two.layer_s * 1.979e15).epsilon(1e-12));
  CHECK(two.exchange_bytes == Approx(8736274.15).epsilon(1e-9));
}

TEST_CASE("Prefill efficiency: 0.5 -> a pass's compute doubles, its exchange and fixed costs do not",
          "[unit]") {
  // kernels.prefill_efficiency divides the attention, the indexer and the GEMMs of a pass (the quota's
  // predictor too), not the fixed cost per layer, the latency or the bytes (their hand values are rounded to
  // 1e-10, hence 1e-9 below).
  const ModelSpec m = testing::pinned_ds660b();
  const HardwareSpec hw = testing::pinned_hopper();
  EngineSpec e = with_overlap(EpOverlap::kNone);
  e.ep_latency = round_table();
  e.prefill_layer_overhead_s = 5e-6;
  const PassPlan full = prefill_pass(m, hw, e, {{{32768, 429}}, {{0, 429}}}, EpGroup{16, 8});
  e.k_prefill_efficiency = 0.5;
  const PassPlan half = prefill_pass(m, hw, e, {{{32768, 429}}, {{0, 429}}}, EpGroup{16, 8});
  const double fixed = 5e-6 + 52e-6 * kMoeShare + 8736274.15 / 50e9 + 62040207.74 / 160e9;
  CHECK(half.layer_s - fixed == Approx(2 * (full.layer_s - fixed)).epsilon(1e-9));
  CHECK(half.attention_s[0] == Approx(2 * full.attention_s[0]).epsilon(1e-12));
  CHECK(attention_time_s(m, hw, e, Chunk{32768, 429}) == Approx(2 * full.attention_s[0]).epsilon(1e-12));
}

}  // namespace sim::cost
