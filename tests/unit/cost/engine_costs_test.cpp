// What the engine adds to the cost model (sim/config/engine.h, sim/cost/compute_model.h, compute_plan.h), by
// hand: the prefill's attention form, group-limited routing, the prefill exchange at its kernels' rates, the
// SMs the exchange holds, the experts' imbalance, MTP, the decode exchange's SM time, the CPU per pass and
// step, and where two micro-batches help or hurt. The engine here is built in code with the values of
// models/engine/deepseek-v3-production.json (its sources say where each comes from; engine_test.cpp pins the
// file), so that a change of the file does not move these computations.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sim/cost/compute_plan.h"
#include "sim/cost/micro_batch_schedule.h"
#include "tests/unit/paper_files.h"

namespace sim::cost {
namespace {

using config::EngineSpec;
using config::EpOverlap;
using config::ExpertBalance;
using config::HardwareSpec;
using config::ModelSpec;

constexpr double kF = 1.979e15, kHbm = 3.35e12;

// dsv3 as the arithmetic reads it (the REQUIREs pin every field used).
ModelSpec dsv3() {
  ModelSpec m = testing::real_model("dsv3");
  REQUIRE(m.layers == 61);
  REQUIRE(m.active_params == 36625618432);
  REQUIRE(m.total_params == 671026419200);
  REQUIRE(m.replicated_params == 17117648384);
  REQUIRE(m.weight_bytes_per_param == 1);
  REQUIRE(m.heads == 128);
  REQUIRE(m.qk_head_dim == 576);
  REQUIRE(m.v_head_dim == 512);
  REQUIRE(m.prefill_mha);
  REQUIRE(m.prefill_qk_head_dim == 192);
  REQUIRE(m.prefill_v_head_dim == 128);
  REQUIRE(m.kv_up_params == 16777216);
  REQUIRE(m.main_kv_bytes_per_token_layer == 1152);
  REQUIRE(!m.sparse());
  testing::pin_deepseek_moe(m);
  return m;
}

// deepseek-v3-production's values (its file's sources), perfect balance and no MTP unless a test sets them.
EngineSpec production() {
  EngineSpec e;
  e.k_prefill_attention_mqa = 0.3234;
  e.k_prefill_attention_mha = 0.2926;
  e.k_decode_attention_dense = 0.2931;
  e.k_decode_attention_sparse = 0.2072;
  e.k_indexer = 0.4;
  e.k_gemm = 0.6035;
  e.k_decode_experts = 0.4936;
  e.k_gemm_hbm = 0.7964;
  e.k_attention_hbm = 0.8955;
  e.prefill_layer_overhead_s = e.decode_layer_overhead_s = 13.5e-6;
  e.ep_overlap = EpOverlap::kTwoMicroBatches;
  e.prefill_comm_sms = 24;
  e.prefill_exchange = {{16, 32, 64}, {43e9, 44e9, 46e9}, {43e9, 47e9, 45e9}};
  e.decode_exchange_sm_s_per_token = 0;  // DeepEP's hooks hold no SM (the MTP case sets LMSYS's reading)
  e.ep_latency.ep_gpus = {8, 16, 32, 64, 128, 256};
  e.ep_latency.decode_dispatch_s = {121.6e-6, 97.3e-6, 68.5e-6, 53.5e-6, 50.1e-6, 47.3e-6};
  e.ep_latency.decode_combine_s = {237.7e-6, 182.2e-6, 129.8e-6, 96.1e-6, 93.7e-6, 75.6e-6};
  e.ep_latency.prefill_dispatch_s = e.ep_latency.decode_dispatch_s;
  e.ep_latency.prefill_combine_s = e.ep_latency.decode_combine_s;
  e.balanced = {{8, 16, 32, 72}, {0.94, 0.9, 0.8, 0.81}};
  e.unbalanced = {{8, 16, 32, 64}, {0.67, 0.61, 0.55, 0.48}};
  return e;
}

// The same engine priced as it runs in service: the in-service values of deepseek-v3-production.json (each
// derived in its sources from the profiles as LMSYS read them; engine_test.cpp pins the file).
EngineSpec in_service() {
  EngineSpec e = production();
  e.k_prefill_attention_mha = 0.3;
  e.k_gemm = 0.6364;
  e.k_prefill_experts = 0.5467;
  e.k_decode_attention_dense = 0.294;
  e.k_gemm_hbm = 0.5777;
  e.k_decode_experts = 0.3581;
  e.prefill_token_s = 2.567e-7;
  e.decode_token_s = 3.242e-7;
  e.prefill_layer_overhead_s = 0;
  e.decode_layer_overhead_s = 23e-6;
  e.decode_exchange_sm_s_per_token = 1.0065e-6;
  e.prefill_exchange = {{16, 32, 64}, {3.0918e10, 3.1637e10, 3.3075e10}, {3.3721e10, 3.6858e10, 3.5290e10}};
  return e;
}

// Per layer, averaged over the 61: the dense active parameters (36,625,618,432 - 58 x 8 x 44,040,192) / 61
// = 16,190,969,344 / 61 = 265,425,726.95, and the dense weight bytes a GPU reads at S shards
// ((17,117,648,384 + (671,026,419,200 - 17,117,648,384) / S) - 58 x 256 x 44,040,192 / S) / 61
// = 17,117,648,384 / 61 = 280,617,186.62 at every S (the recounted total less the replicated part is the
// routed experts).
// The decode profile's MTP (LMSYS's assumption): one draft token of one layer, accepted 60% of the time.
EngineSpec with_profile_mtp(EngineSpec e) {
  e.mtp_draft_tokens = 1;
  e.mtp_acceptance = 0.6;
  e.mtp_module_layers = 1;
  return e;
}

constexpr double kDenseParams = (36625618432.0 - 58.0 * 8 * 44040192) / 61;
double dense_bytes(int shards) {
  return (17117648384.0 + (671026419200.0 - 17117648384.0) / shards - 58.0 * 256 * 44040192 / shards) / 61;
}

}  // namespace

TEST_CASE(
    "Prefill attention: V3's dense MLA in MHA form -> the heads' own dims and the cached latents expanded",
    "[unit]") {
  const ModelSpec m = dsv3();
  // Chunk {1000 cached, 2000 new}: 2000 x 1000 + 2000 x 2001 / 2 = 4,001,000 (query, token) pairs, each
  // 2 x 128 x (192 + 128) = 81,920 FLOPs: 327,761,920,000; the 1000 cached latents expanded by 16,777,216
  // weights: 33,554,432,000 FLOPs. Together 361,316,352,000 per layer. In the absorbed form (what the cost
  // model counted before) the pairs alone would take 278,528 each: 1,114,390,528,000, 3.1x more.
  CHECK(attention_flops(m, {1000, 2000}) == 361316352000.0);
  // The MHA rate (FlashAttention-3's 579 TFLOP/s = 0.2926 of the FP8 peak), not the absorbed form's.
  const HardwareSpec hw = testing::pinned_hopper();
  CHECK(attention_time_s(m, hw, production(), Chunk{1000, 2000}) ==
        Approx(361316352000.0 / (kF * 0.2926)).epsilon(1e-12));
  // Nothing new: nothing to expand or attend.
  CHECK(attention_flops(m, {5000, 0}) == 0);
  // A few new tokens over a long cache run in the absorbed form, as the decode does: expanding 32,721 cached
  // latents (1.098e12 FLOPs) would cost more than the smaller products save. One new token: 32,722 pairs x
  // 278,528 = 9.114e9 FLOPs, at the absorbed form's rate (0.3234 of the peak); in MHA form 1.1006e12, 121x
  // more. The forms break even near 171 new tokens: (32000 + 85.5) x 160 x 196,608 < 2 x 16,777,216 x 32000
  // at 160 new tokens, > at 180.
  CHECK(attention_flops(m, {32721, 1}) == 32722.0 * 278528);
  CHECK(attention_time_s(m, hw, production(), Chunk{32721, 1}) ==
        Approx(32722.0 * 278528 / (kF * 0.3234)).epsilon(1e-12));
  CHECK(attention_flops(m, {32000, 160}) == (32000.0 * 160 + 160.0 * 161 / 2) * 278528);
  CHECK(attention_flops(m, {32000, 180}) ==
        (32000.0 * 180 + 180.0 * 181 / 2) * 81920 + 2.0 * 16777216 * 32000);
  // DSA (V3.2) keeps the absorbed form and its rate.
  const ModelSpec v32 = testing::pinned_ds660b();
  REQUIRE_FALSE(v32.prefill_mha);
  CHECK(gpu_rates(v32, hw, production()).prefill_attention == Approx(kF * 0.3234).epsilon(1e-12));
  CHECK(gpu_rates(m, hw, production()).prefill_attention == Approx(kF * 0.2926).epsilon(1e-12));
}

TEST_CASE("Nodes per token: group-limited routing -> the expected distinct nodes of a token's experts",
          "[unit]") {
  const ModelSpec m = dsv3();  // 8 groups, a token in 4 of them, 8 experts
  // 2 nodes of 4 groups: a node is missed when all 4 groups lie on the other: 1 - 1/70; 2 x (69/70).
  CHECK(nodes_per_token(m, 2) == Approx(2 * 69.0 / 70).epsilon(1e-12));
  // 4 nodes of 2 groups: a node is missed with C(6, 4) / C(8, 4) = 15/70: 4 x 55/70 = 3.142857.
  CHECK(nodes_per_token(m, 4) == Approx(4 * 55.0 / 70).epsilon(1e-12));
  // 3 nodes hold 3, 3 and 2 groups (whole groups, as many as can be even): missed with C(5, 4) / 70 = 5/70
  // twice and 15/70 once: 2 x 65/70 + 55/70 = 2.642857. (Spreading 8/3 groups per node as a fraction, the
  // rule for groups spanning nodes, would give a negative count.)
  CHECK(nodes_per_token(m, 3) == Approx((2 * 65.0 + 55) / 70).epsilon(1e-12));
  // 8 nodes of one group: 4 of them.
  CHECK(nodes_per_token(m, 8) == Approx(4).epsilon(1e-12));
  // 16 nodes, a group over 2: each of the 4 groups gets 2 experts, on 2 x (1 - 1/4) = 1.5 nodes: 6.
  CHECK(nodes_per_token(m, 16) == Approx(6).epsilon(1e-12));
  CHECK(nodes_per_token(m, 1) == 1);
  // Without group-limited routing (the rule before): min(4, nodes, 8).
  ModelSpec plain = m;
  plain.expert_groups = 0;
  CHECK(nodes_per_token(plain, 4) == 4);
  CHECK(nodes_per_token(plain, 16) == 4);
  CHECK(nodes_per_token(plain, 2) == 2);
  // Groups without a node limit: no group limit either.
  ModelSpec unlimited = m;
  unlimited.max_nodes_per_token = 0;
  CHECK(nodes_per_token(unlimited, 16) == 8);
}

TEST_CASE("Prefill exchange: DeepEP's normal kernels -> every node a token goes to, at their rates",
          "[unit]") {
  const ModelSpec m = dsv3();
  const HardwareSpec hw = testing::pinned_hopper();
  const EpGroup ep32{32, 8};
  // 16,384 tokens per GPU at EP32 (4 nodes, 3.142857 hit per token), per layer averaged over 61:
  //   to every node hit: 16,384 x 7168 x 58/61 x 3.142857 = 350,946,354.4 values; dispatch at 1.03125 B,
  //   combine at 2 B: 361,913,427.9 B at 44 GB/s + 701,892,708.7 B at 47 GB/s = 8.2253052 + 14.9338874 ms;
  //   the remote ones at the line: 3/4 x 350,946,354.4 x 3.03125 / 50e9 = 15.9571 ms, less.
  const Exchange x = prefill_exchange(m, 16384, ep32);
  const double values = 16384.0 * 7168 * 58 / 61 * (4 * 55.0 / 70);
  CHECK(x.nodes_dispatch == Approx(values * 1.03125).epsilon(1e-12));
  CHECK(x.nodes_combine == Approx(values * 2).epsilon(1e-12));
  CHECK(x.cnic == Approx(values * 3.03125 * 0.75).epsilon(1e-12));
  CHECK(prefill_exchange_s(hw, production(), x, ep32) ==
        Approx(values * 1.03125 / 44e9 + values * 2 / 47e9).epsilon(1e-12));
  CHECK(prefill_exchange_s(hw, production(), x, ep32) == Approx(23.1591926e-3).epsilon(1e-7));
  // Without a rate table: the line (the engine before).
  CHECK(prefill_exchange_s(hw, EngineSpec{}, x, ep32) ==
        Approx(values * 3.03125 * 0.75 / 50e9).epsilon(1e-12));
  // EP24 lies between 16 and 32 in log2: (1 - w) x 43 + w x 44 with w = log2(24/16) = 0.585. Its 3 nodes
  // hold 3, 3 and 2 of the groups: 2 x (1 - 5/70) + (1 - 15/70) = 2.642857 nodes per token.
  const double w = std::log2(24.0 / 16);
  const Exchange x24 = prefill_exchange(m, 16384, EpGroup{24, 8});
  CHECK(x24.nodes_dispatch == Approx(16384.0 * 7168 * 58 / 61 * (185.0 / 70) * 1.03125).epsilon(1e-12));
  CHECK(prefill_exchange_s(hw, production(), x24, EpGroup{24, 8}) ==
        Approx(x24.nodes_dispatch / ((1 - w) * 43e9 + w * 44e9) +
               x24.nodes_combine / ((1 - w) * 43e9 + w * 47e9))
            .epsilon(1e-12));
}

TEST_CASE(
    "Prefill pass: DeepSeek's prefill profile point by hand -> the profile's parts on 108 of 132 SMs, the "
    "two "
    "streams stage by stage, 34.6 ms per layer",
    "[unit]") {
  const ModelSpec m = dsv3();
  const HardwareSpec hw = testing::pinned_hopper();
  REQUIRE(hw.gpu_sms == 132);
  const EngineSpec e = in_service();
  // Each GPU of an EP32 unit (one DP group of 32) holds 4 prompts of 4096 new tokens, perfect balance, two
  // micro-batches of 8192 tokens. Per layer (averaged over 61), both micro-batches, on the 108 SMs the
  // exchange's 24 leave (x 132 / 108), at the in-service rates (models/engine/deepseek-v3-production.json):
  //   attention: 4 x 4096 x 4097 / 2 pairs x 81,920 FLOPs / (1.979e15 x 0.3000) = 5.6602 ms (profile 5.66);
  //   dense GEMMs: 2 x 265,425,726.95 x 16,384 / (1.979e15 x 0.6364) = 8.4405 ms (profile 8.44), of which
  //     the shared experts, 44,040,192 x 58/61 / 265,425,726.95 = 15.78%, run beside the exchange;
  //   routed experts: 2 x 44,040,192 x 131,072 pairs x 58/61 / (1.979e15 x 0.5467) = 12.4006 ms (12.40);
  //   small kernels: 16,384 x 2.567e-7 s = 5.1404 ms (5.14).
  // Their sum, 31.64 ms, is the compute stream's work; the communication stream's: the dispatch 2 x 68.5 us
  // x 58/61 + 3.6191e8 B / 3.1637e10 B/s = 11.57 ms, the combine 2 x 129.8 us x 58/61 + 7.0189e8 B /
  // 3.6858e10 B/s = 19.29 ms (profile: core + barrier 11.57 and 19.29). Per micro-batch: A = 8.9547 (the
  // attention with its projections and small kernels), S = 0.6658, M = 6.2003, D = 5.7849, K = 9.6450 ms.
  // Stage by stage (micro_batch_schedule.h): D <= A and D <= M, so neither routed-expert stage waits for its
  // dispatch; the next layer's ATTN(mb1) waits for COMBINE(mb1), which starts when MLP(mb1) ends and lasts K,
  // while the compute stream has only M + S to run: K - M - S = 2.7789 ms idle; ATTN(mb0) then waits
  // K - A - S = 0.0245 ms for COMBINE(mb0). A layer: 2 (A + S + M) + 2.7789 + 0.0245 = 34.4450 ms. The
  // pass adds its fill and drain once (9.9 ms over 61 layers); the profile's 34.64 ms per layer is its
  // compute stream's 31.64 plus 2.48 idle (dpsim: 2.95) and the communication stream's 30.86 plus 3.65.
  std::vector<std::vector<Chunk>> per_gpu(32, std::vector<Chunk>(4, Chunk{0, 4096}));
  const PassPlan p = prefill_pass(m, hw, e, per_gpu, EpGroup{32, 8});
  const double on_108 = 132.0 / 108;
  const double att = 4 * 4096.0 * 4097 / 2 * 2 * 128 * 320 / (kF * 0.3);
  const double dense = 2 * (2 * kDenseParams * 8192 / (kF * 0.6364));
  const double experts = 2 * (2 * 44040192.0 * 65536 / (kF * 0.5467)) * 58 / 61;
  const double small = 16384 * 2.567e-7;
  CHECK(att * on_108 == Approx(5.66e-3).epsilon(1e-3));
  CHECK(dense * on_108 == Approx(8.44e-3).epsilon(1e-3));
  CHECK(experts * on_108 == Approx(12.40e-3).epsilon(1e-3));
  CHECK(small * on_108 == Approx(5.14e-3).epsilon(1e-3));
  const double share = 44040192.0 * 58 / 61 / kDenseParams;
  const double values = 16384.0 * 7168 * 58 / 61 * (4 * 55.0 / 70);
  MicroBatchStages s;
  s.attention = (att + dense * (1 - share) + small) * on_108 / 2;
  s.shared = dense * share * on_108 / 2;
  s.experts = experts * on_108 / 2;
  s.dispatch = (2 * 68.5e-6 * 58 / 61 + values * 1.03125 / 3.1637e10) / 2;
  s.combine = (2 * 129.8e-6 * 58 / 61 + values * 2 / 3.6858e10) / 2;
  CHECK(2 * s.dispatch == Approx(11.57e-3).epsilon(1e-3));
  CHECK(2 * s.combine == Approx(19.29e-3).epsilon(1e-3));
  const double layer = 2 * (s.attention + s.shared + s.experts) + (s.combine - s.experts - s.shared) +
                       (s.combine - s.attention - s.shared);
  CHECK(layer == Approx(34.4450e-3).epsilon(1e-5));
  CHECK(two_stream_pass_s(s, 62) - two_stream_pass_s(s, 61) == Approx(layer).epsilon(1e-9));
  CHECK(p.layer_s * 61 == Approx(two_stream_pass_s(s, 61)).epsilon(1e-9));
  CHECK(p.layer_s == Approx(34.64e-3).epsilon(0.005));  // the profile's, to its reading (+-0.07 ms)
  CHECK(8 * 16384 / (61 * p.layer_s) == Approx(62116).epsilon(1e-3));
  // A wrong model fails: the streams' work side by side (the busier stream alone) gives 31.64 ms, 9% short;
  // the small kernels per layer and micro-batch instead of per token would give 2 x 2.567e-7 s, nothing.
  CHECK(2 * (s.attention + s.shared + s.experts) < 0.92 * p.layer_s);
  // Where the time goes, summed over the 32 GPUs (alike here: none waits for another), as the profile reads:
  // the compute stream's work on its 108 SMs (31.64 ms a layer), and the exchange only where the compute
  // stream waits for it: 34.59 - 31.64 = 2.95 ms a layer (8.5%), the profile's 2.48 (7.2%); no fixed cost
  // per layer. Counting the 24 SMs' slowdown as exchange instead (the compute at 132 SMs, 25.89 ms) would
  // show 8.70 ms (25%) exposed, three times what the profile shows.
  const double stream = (att + dense + experts + small) * on_108;
  CHECK(stream == Approx(31.64e-3).epsilon(1e-3));
  CHECK(p.split.compute_s == Approx(32 * 61 * stream).epsilon(1e-9));
  CHECK(p.split.exchange_s == Approx(32 * 61 * (p.layer_s - stream)).epsilon(1e-9));
  CHECK(p.split.exchange_s / (32 * 61) == Approx(2.95e-3).epsilon(0.01));
  CHECK(p.split.exchange_s / p.split.total_s() < 0.09);
  CHECK(p.split.fixed_s == 0);
  CHECK(p.split.total_s() == Approx(32 * 61 * p.layer_s).epsilon(1e-9));
  CHECK(p.split.imbalance_s == 0);
  // Nothing to compute: nothing.
  CHECK(prefill_pass(m, hw, e, std::vector<std::vector<Chunk>>(32), EpGroup{32, 8}).layer_s == 0);
}

TEST_CASE("Expert imbalance: the busiest expert GPU -> its experts and its exchange, not the dense part",
          "[unit]") {
  const ModelSpec m = dsv3();
  const HardwareSpec hw = testing::pinned_hopper();
  EngineSpec e = production();
  e.ep_overlap = EpOverlap::kNone;  // compute, then the exchange: each part shows
  e.prefill_comm_sms = 0;
  e.ep_latency = {};
  const std::vector<std::vector<Chunk>> per_gpu(32, {Chunk{0, 2048}});
  const PassPlan even = prefill_pass(m, hw, e, per_gpu, EpGroup{32, 8});
  e.expert_balance = ExpertBalance::kBalancer;  // EPLB's balancedness at EP32: 0.80, the busiest 1.25x
  const PassPlan busy = prefill_pass(m, hw, e, per_gpu, EpGroup{32, 8});
  // One micro-batch of 2048 tokens: the experts go from 16,384 pairs to 20,480 on the busiest GPU (FLOP-bound
  // in both: 2 x 44,040,192 x pairs / 1.19430e15 x 58/61), the exchange's time by 1.25, on the CNIC (at the
  // kernels' rates) and on NVLink (2048 x 7168 x 3.03125 B x 58/61 x 8 x 7/8 at 160 GB/s) alike: the
  // busiest GPU receives and sends back a quarter more of both.
  const double experts = 2 * 44040192.0 * 16384 / (kF * 0.6035) * 58 / 61;
  const Exchange x = prefill_exchange(m, 2048, EpGroup{32, 8});
  const double exchange = prefill_exchange_s(hw, e, x, EpGroup{32, 8});
  REQUIRE(hw.nvlink_bw_Bps == 160e9);
  const double nvlink = 2048.0 * 7168 * 3.03125 * 58 / 61 * 8 * 7 / 8 / 160e9;
  CHECK(x.nvlink / 160e9 == Approx(nvlink).epsilon(1e-12));
  CHECK(busy.layer_s - even.layer_s == Approx(0.25 * (experts + exchange + nvlink)).epsilon(1e-9));
  // The busiest GPU's imbalance by EP size, from the balancer's table: 1 / 0.8 at 32, 1 / 0.81 beyond 72.
  CHECK(config::expert_imbalance(e, 32) == Approx(1.25).epsilon(1e-12));
  CHECK(config::expert_imbalance(e, 144) == Approx(1 / 0.81).epsilon(1e-12));
  // The exchange's bytes on the network stay the group's average.
  CHECK(busy.exchange_bytes == even.exchange_bytes);
}

TEST_CASE(
    "Decode with MTP: DeepSeek's decode profile point by hand -> two queries, one KV read, a draft layer, "
    "1.6 tokens per step",
    "[unit]") {
  const ModelSpec m = dsv3();
  const HardwareSpec hw = testing::pinned_hopper();
  EngineSpec e = with_profile_mtp(production());
  REQUIRE(e.tokens_per_step() == 1.6);
  REQUIRE(e.queries_per_step() == 2);
  const EpGroup ep{128, 8};  // 16 nodes
  // 128 requests per GPU of 4096 tokens of context (524,288 in all), per GPU, all layers:
  //   attention, 2 queries: 2 x 61 x 278,528 x 524,288 / 580.05e12 = 30.7140 ms, above the KV's
  //   61 x 1152 x 524,288 / 3.0e12 = 12.28 ms (read once);
  //   dense GEMMs per micro-batch of 128 tokens (2 per request): memory-bound, the dense weights at S = 128,
  //   plus 13.5 us; the draft layer: its attention (one query, 1/61 of the layers) and its GEMMs on 64
  //   tokens; experts: 2 micro-batches of 1024 pairs on the GPU's 2 experts (FLOP-bound at the masked
  //   kernels' 976.8 TFLOP/s), plus the draft layer's: 56.48 ms (45.68 own, 10.80 experts). The exchange:
  //   (61 x 256 + 128) tokens x 8 x 7168 x 3.03125 B x 58/61 x 15/16 at 50 GB/s (48.79 ms), 2 x 62 x 58/61 x
  //   143.8 us of latency (16.95 ms): 65.74 ms, above the compute, sets the step: 66.3011 ms with the fill.
  //   TPOT = 66.3011 / 1.6 = 41.44 ms, 24,711 tokens/s per node (against the profile's 18,598). Low-latency
  //   kernels that held the SMs for their send and receive phases (LMSYS's unit-test reading, 0.5273 us x
  //   (61 x 256 + 128) tokens x 58/61 = 7.89 ms) would bring the compute to 64.37 ms, still below.
  const double ctx = 128 * 4096.0;
  auto att = [&](int q) {
    return std::max(q * 61 * 278528.0 * ctx / (kF * 0.2931), 61 * 1152.0 * ctx / (kHbm * 0.8955));
  };
  auto dense = [&](double t) {
    return std::max(2 * kDenseParams * t / (kF * 0.6035), dense_bytes(128) / (kHbm * 0.7964));
  };
  const double own = att(2) + 61 * 2 * (dense(128) + 13.5e-6) + att(1) / 61 + 2 * (dense(64) + 13.5e-6);
  CHECK(decode_own_s(m, hw, e, 128, ctx, ep) == Approx(own).epsilon(1e-12));
  auto experts = [&](double t) {
    return std::max(2 * 44040192.0 * t * 8 / (kF * 0.4936),
                    std::min(2.0, t * 8) * 44040192 / (kHbm * 0.7964)) *
           58 / 61;
  };
  const double ex = 61 * 2 * experts(128) + 2 * experts(64);
  const double sm = 5.273e-7 * (61 * 256 + 128) * 58 / 61;
  CHECK(sm == Approx(7.8935e-3).epsilon(1e-4));
  const double bytes_s = (61 * 256 + 128) * 8 * 7168 * 3.03125 * 58 / 61 * 15.0 / 16 / 50e9;
  const double moe_passes = 62 * 58.0 / 61;
  const double fill = 143.8e-6 + bytes_s / moe_passes / 2;
  const double compute = own + ex, exchange = 2 * moe_passes * 143.8e-6 + bytes_s;
  CHECK(compute == Approx(56.4807e-3).epsilon(1e-5));
  REQUIRE(exchange > compute + sm);
  const StepPlan s = decode_step(m, hw, e, 128, ctx, ep);
  CHECK(s.step_s == Approx(exchange + fill).epsilon(1e-9));
  CHECK(s.step_s == Approx(66.3011e-3).epsilon(1e-5));
  CHECK(s.exchange_bytes == Approx(bytes_s * 50e9).epsilon(1e-9));
  EngineSpec holding = e;
  holding.decode_exchange_sm_s_per_token = 5.273e-7;
  CHECK(decode_step(m, hw, holding, 128, ctx, ep).step_s == Approx(s.step_s).epsilon(1e-12));
  // Without MTP: one query, no draft layer; the step is shorter but yields one token, not 1.6. Here, where
  // the exchange sets the step, the second query doubles the exchange's bytes too: per token MTP gains
  // nothing (41.44 ms against 41.23). At 16 requests per GPU the step is the weights' and the latency's, the
  // second query nearly free: 14.53 ms per token against 20.40 (the compute binds without MTP: 20.23 ms
  // against the exchange's 19.71). There the kernels' SM time, when they hold the SMs, shows: 16 x 61 x
  // 0.5273 us x 58/61 = 0.489 ms more compute, 20.72 ms, + the fill 0.170 ms = 20.89 ms.
  EngineSpec plain = e;
  plain.mtp_draft_tokens = 0;
  const StepPlan one = decode_step(m, hw, plain, 128, ctx, ep);
  CHECK(one.step_s < s.step_s);
  CHECK(one.step_s == Approx(41.2295e-3).epsilon(1e-5));
  const double mtp16 = decode_step(m, hw, e, 16, 16 * 4096.0, ep).step_s / e.tokens_per_step();
  const double plain16 = decode_step(m, hw, plain, 16, 16 * 4096.0, ep).step_s;
  CHECK(mtp16 == Approx(14.5303e-3).epsilon(1e-5));
  CHECK(plain16 == Approx(20.3983e-3).epsilon(1e-5));
  EngineSpec plain_holding = plain;
  plain_holding.decode_exchange_sm_s_per_token = 5.273e-7;
  CHECK(decode_step(m, hw, plain_holding, 16, 16 * 4096.0, ep).step_s - plain16 ==
        Approx(16 * 61 * 5.273e-7 * 58 / 61).epsilon(1e-6));
}

TEST_CASE(
    "Decode in service: DeepSeek's decode profile point by hand -> the profile's parts per layer, the step "
    "the compute's, 62 x 1.422 ms within 1%",
    "[unit]") {
  const ModelSpec m = dsv3();
  const HardwareSpec hw = testing::pinned_hopper();
  EngineSpec e = with_profile_mtp(in_service());
  const EpGroup ep{128, 8};
  // 128 requests per GPU, 4,096 tokens of context each, two queries (MTP), two micro-batches of 128 tokens.
  // Per layer of the target model (61), at the in-service values, against the profile's (LMSYS's reading):
  //   attention 278,528 x 524,288 x 2 / (1.979e15 x 0.294) = 0.5020 ms (0.502);
  //   dense GEMMs, memory-bound, twice the dense weights 280,617,187 B / (3.35e12 x 0.5777) = 0.2900 (0.290);
  //   routed experts 2 x (2 x 44,040,192 x 1024 pairs / (1.979e15 x 0.3581)) x 58/61 = 0.2420 (0.242);
  //   small kernels 256 x 3.242e-7 = 0.0830 (0.083); launches 2 x 23 us = 0.046 (0.046);
  //   the low-latency kernels on the stream 256 x 1.0065e-6 x 58/61 = 0.2450 (0.172 + 0.073).
  // 1.4080 ms against the parts' 1.408. 61 layers: 85.89 ms; the draft layer (one query, 128 tokens: one
  // layer's attention of one query, the dense weights twice, experts of 512 pairs per micro-batch, 128 tokens
  // of small kernels and SM time, two launches) 0.87 ms: 86.76 ms. The exchange, 2 x 58.95 x 143.8 us + 48.79
  // ms = 65.74 ms, hides; the fill adds 0.56 ms: 87.32 ms. LMSYS's 18,598 tokens/s per node takes 62 layers
  // of 1.422 ms: 88.16 ms.
  const double ctx = 128 * 4096.0;
  const double dense_weights = dense_bytes(128);
  const double per_layer = 278528.0 * ctx * 2 / (kF * 0.294) + 2 * dense_weights / (kHbm * 0.5777) +
                           2 * (2 * 44040192.0 * 1024 / (kF * 0.3581)) * 58 / 61 + 256 * 3.242e-7 +
                           2 * 23e-6 + 256 * 1.0065e-6 * 58 / 61;
  CHECK(per_layer == Approx(1.408e-3).epsilon(1e-3));  // the profile's parts: 1.408 (total 1.422)
  const double draft =
      278528.0 * ctx / (kF * 0.294) + 2 * dense_weights / (kHbm * 0.5777) +
      2 * std::max(2 * 44040192.0 * 512 / (kF * 0.3581), 2 * 44040192.0 / (kHbm * 0.5777)) * 58 / 61 +
      128 * 3.242e-7 + 2 * 23e-6 + 128 * 1.0065e-6 * 58 / 61;
  const double bytes_s = (61 * 256 + 128) * 8 * 7168 * 3.03125 * 58 / 61 * 15.0 / 16 / 50e9;
  const double moe_passes = 62 * 58.0 / 61;
  const double fill = 143.8e-6 + bytes_s / moe_passes / 2;
  REQUIRE(2 * moe_passes * 143.8e-6 + bytes_s < 61 * per_layer);
  const StepPlan st = decode_step(m, hw, e, 128, ctx, ep);
  CHECK(st.step_s == Approx(61 * per_layer + draft + fill).epsilon(1e-9));
  CHECK(st.step_s == Approx(62 * 1.422e-3).epsilon(0.01));
  // TPOT at 1.6 tokens per step, and the validation band's (47.88 - 64.78 ms) middle.
  CHECK(st.step_s / 1.6 == Approx(8 * 128 / 18598.0).epsilon(0.01));
  // A wrong scaling fails: launches per token (2 x 23 us x 256 per layer) or small kernels per micro-batch
  // (2 x 3.242e-7 s) would move the step by +700 ms or -5 ms.
  EngineSpec per_token_launch = e;
  per_token_launch.decode_layer_overhead_s = 23e-6 * 128;
  CHECK(decode_step(m, hw, per_token_launch, 128, ctx, ep).step_s > 2 * st.step_s);
}

TEST_CASE("CPU time: per decode step and per prefill pass -> added once, whatever the overlap", "[unit]") {
  const ModelSpec m = dsv3();
  const HardwareSpec hw = testing::pinned_hopper();
  EngineSpec e = production();
  const StepPlan before = decode_step(m, hw, e, 32, 32 * 4000.0, EpGroup{144, 8});
  const PassPlan pass = prefill_pass(m, hw, e, {{Chunk{0, 4096}}}, EpGroup{32, 8});
  e.decode_cpu_s = 2e-3;
  e.prefill_cpu_s = 0.1;
  CHECK(decode_step(m, hw, e, 32, 32 * 4000.0, EpGroup{144, 8}).step_s - before.step_s ==
        Approx(2e-3).epsilon(1e-9));
  const PassPlan with_cpu = prefill_pass(m, hw, e, {{Chunk{0, 4096}}}, EpGroup{32, 8});
  CHECK(61 * (with_cpu.layer_s - pass.layer_s) == Approx(0.1).epsilon(1e-9));
  CHECK(with_cpu.split.cpu_s == 0.1);
  // A step's split sums the group's 144 GPUs: 144 x 2 ms.
  CHECK(decode_step(m, hw, e, 32, 32 * 4000.0, EpGroup{144, 8}).split.cpu_s ==
        Approx(144 * 2e-3).epsilon(1e-12));
}

TEST_CASE("Two micro-batches: a decode step -> slower at 2 tokens per GPU, faster at 256 (DeepSeek-V3, EP72)",
          "[unit]") {
  // The mechanism: each micro-batch reads the GEMMs' weights and pays the fixed costs per layer (and the
  // exchange's latency twice); in return one micro-batch's exchange hides behind the other's compute. At 2
  // tokens per GPU the weight reads dominate and the exchange is small: two micro-batches cost more; at 256
  // the exchange is as long as the compute and hiding it wins. SGLang measured the same signs on H100
  // (LMSYS 2025-05-05: -27% at 32 tokens per GPU, +25.5% at 256; its crossover between 64 and 128, dpsim's
  // near 8: the fixed costs of the kernels beyond DeepGEMM's have no public figure). Ideal overlap (no cost)
  // would be faster at every size: the first check fails for it.
  const ModelSpec m = dsv3();
  const HardwareSpec hw = testing::pinned_hopper();
  EngineSpec two = production(), none = production();
  none.ep_overlap = EpOverlap::kNone;
  auto step = [&](const EngineSpec& e, int b) {
    return decode_step(m, hw, e, b, b * 2000.0, EpGroup{72, 8}).step_s;
  };
  CHECK(step(two, 2) > step(none, 2));
  CHECK(step(two, 256) < step(none, 256));
  CHECK(step(none, 256) / step(two, 256) > 1.25);
  EngineSpec ideal = production();
  ideal.ep_overlap = EpOverlap::kIdeal;
  CHECK(step(ideal, 2) < step(none, 2));
}

TEST_CASE(
    "Time split: a 2-GPU prefill group of unequal prompts -> each GPU's own time, the lighter one waits",
    "[unit]") {
  // GPU 0 holds a 8,000-token prompt, GPU 1 one of 1,000 (dsv3, EP16 over 2 nodes, two micro-batches). Each
  // GPU's own time (compute + exchange + fixed + CPU) is its layer work over the GPU's speed (its busy time,
  // a second path through prefill_pass); GPU 1 waits the difference to GPU 0's pace: imbalance. A split
  // that charged every GPU the slowest GPU's compute (no imbalance) would give GPU 1's busy time to both.
  const ModelSpec m = dsv3();
  const HardwareSpec hw = testing::pinned_hopper();
  EngineSpec e = production();
  e.prefill_cpu_s = 0.05;
  const PassPlan p = prefill_pass(m, hw, e, {{Chunk{0, 8000}}, {Chunk{0, 1000}}}, EpGroup{16, 8});
  REQUIRE(p.layer_work.size() == 2);
  const double own0 = 61 * p.layer_work[0] / hw.gpu_flops, own1 = 61 * p.layer_work[1] / hw.gpu_flops;
  CHECK(own0 == Approx(61 * p.layer_s).epsilon(1e-12));
  REQUIRE(own1 < 0.8 * own0);
  CHECK(p.split.total_s() - p.split.imbalance_s == Approx(own0 + own1).epsilon(1e-9));
  CHECK(p.split.imbalance_s == Approx(own0 - own1).epsilon(1e-9));
  CHECK(p.split.total_s() == Approx(2 * 61 * p.layer_s).epsilon(1e-9));
  CHECK(p.split.cpu_s == Approx(2 * 0.05).epsilon(1e-12));
  // The same for a decode step: a GPU whose own part is smaller waits the difference.
  const StepPlan s = decode_group_step(m, hw, e, 0.03, 2 * 64, EpGroup{16, 8});
  const TimeSplit slow = s.gpu_split(0.03), light = s.gpu_split(0.01);
  CHECK(slow.imbalance_s == 0);
  CHECK(slow.total_s() == Approx(s.step_s).epsilon(1e-12));
  CHECK(light.total_s() == Approx(s.step_s).epsilon(1e-12));
  CHECK(light.compute_s == Approx(slow.compute_s - 0.02).epsilon(1e-12));
  CHECK(light.imbalance_s > 0);
}

}  // namespace sim::cost
