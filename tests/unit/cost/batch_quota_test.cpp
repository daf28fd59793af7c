// The compute-quota batch former (DualPath §6.2): FIFO filling, binary search on the last request's bsz.
#include "sim/cost/batch_quota.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/unit/paper_files.h"

namespace sim::cost {
namespace {

using Verdict = QuotaBatchFormer::Verdict;

// A dense toy model on a GPU whose prefill attention runs at 4 FLOP/s: 2 x 1 x (1 + 1) = 4 FLOPs per
// (query, attended token) pair, so the predicted attention time in seconds equals the attended tokens:
// sum over i = 1..bsz of cached + i.
config::ModelSpec toy_model() {
  config::ModelSpec m;
  m.layers = 1;
  m.heads = 1;
  m.qk_head_dim = 1;
  m.v_head_dim = 1;
  return m;
}

config::HardwareSpec toy_hw() {
  config::HardwareSpec hw;
  hw.gpu_flops = 4;
  return hw;
}

config::EngineSpec toy_engine() {
  config::EngineSpec e;
  e.k_prefill_attention_mha = e.k_prefill_attention_mqa = 1;  // the whole peak, in either form
  e.k_gemm = 0.5;  // the GEMM rate must not enter the quota (a former on it would be 2x off)
  return e;
}

// The batch `b` formed from `cs` as chunks.
std::vector<Chunk> chunks_of(const QuotaBatch& b, const std::vector<Chunk>& cs) {
  std::vector<Chunk> out(cs.begin(), cs.begin() + b.whole);
  if (b.chunk_bsz > 0) out.push_back({cs[b.whole].cached, b.chunk_bsz});
  return out;
}

}  // namespace

TEST_CASE("Batch quota: hand example -> two whole requests and the third chunked to 2 tokens", "[unit]") {
  // Times: {0,10} = 55 s each; {100, b} = 100 b + b(b+1)/2. Quota 400: 110 used, 290 left: b = 2 -> 203
  // fits, b = 3 -> 306 does not.
  const std::vector<Chunk> cs = {{0, 10}, {0, 10}, {100, 10}, {0, 1}};
  BatchLimits lim;
  lim.quota_s = 400;
  const QuotaBatch b = form_quota_batch(cs, toy_model(), toy_hw(), toy_engine(), lim);
  CHECK(b.whole == 2);
  CHECK(b.chunk_bsz == 2);
  CHECK(b.size() == 3);
  CHECK(attention_time_s(toy_model(), toy_hw(), toy_engine(), chunks_of(b, cs)) == 313);
}

TEST_CASE("Batch quota: next request cannot take one token -> it stays out, the batch is the rest",
          "[unit]") {
  // Quota 200: 110 used, 90 left; {100, 1} alone costs 101.
  BatchLimits lim;
  lim.quota_s = 200;
  const QuotaBatch b =
      form_quota_batch({{0, 10}, {0, 10}, {100, 10}}, toy_model(), toy_hw(), toy_engine(), lim);
  CHECK(b.whole == 2);
  CHECK(b.chunk_bsz == 0);
}

TEST_CASE("Batch quota: a lone request over the quota even at one token -> runs with one token", "[unit]") {
  BatchLimits lim;
  lim.quota_s = 10;
  const QuotaBatch b = form_quota_batch({{1000, 50}, {0, 1}}, toy_model(), toy_hw(), toy_engine(), lim);
  CHECK(b.whole == 0);
  CHECK(b.chunk_bsz == 1);
}

TEST_CASE("Batch quota: no quota -> every request joins whole", "[unit]") {
  const QuotaBatch b =
      form_quota_batch({{1e6, 1e4}, {1e6, 1e4}, {0, 3}}, toy_model(), toy_hw(), toy_engine(), BatchLimits{});
  CHECK(b.whole == 3);
  CHECK(b.chunk_bsz == 0);
}

TEST_CASE("Batch quota: HBM cap -> stops before the request whose cached + bsz would overflow it", "[unit]") {
  BatchLimits lim;
  lim.hbm_bytes = 100;
  lim.hbm_bytes_per_token = 1;
  // 10 + 70 = 80 fit; + 30 = 110 does not. The first request always joins, even above the cap.
  CHECK(form_quota_batch({{0, 10}, {50, 20}, {0, 30}, {0, 1}}, toy_model(), toy_hw(), toy_engine(), lim)
            .whole == 2);
  CHECK(form_quota_batch({{500, 10}, {0, 1}}, toy_model(), toy_hw(), toy_engine(), lim).whole == 1);
}

TEST_CASE("Batch quota former: offers one by one -> whole, then chunked, then closed", "[unit]") {
  const auto m = toy_model();
  const auto hw = toy_hw();
  const auto e = toy_engine();
  QuotaBatchFormer f(m, hw, e, BatchLimits{400, 1e300, 0});
  auto o1 = f.offer({0, 10});
  CHECK(o1.verdict == Verdict::kWhole);
  CHECK(o1.bsz == 10);
  CHECK_FALSE(f.closed());
  auto o2 = f.offer({100, 10});
  CHECK(o2.verdict == Verdict::kChunked);
  CHECK(o2.bsz == 3);  // 55 used, 345 left: b = 3 -> 306 fits, b = 4 -> 410 does not
  CHECK(f.closed());
  CHECK(f.attention_s() == attention_time_s(m, hw, e, f.chunks()));
}

TEST_CASE("Batch quota: batch time exactly at the quota -> it fits, whole or cut to that bsz", "[unit]") {
  // Toy times are exact integers. {0,10}: 55 s; two of them: 110 s = the quota: both join whole (the
  // quota is inclusive). {100, 2}: 100 x 2 + 3 = 203 s; 55 + 203 = 258 s = the quota: cut to exactly 2.
  BatchLimits lim;
  lim.quota_s = 110;
  const QuotaBatch whole =
      form_quota_batch({{0, 10}, {0, 10}, {0, 1}}, toy_model(), toy_hw(), toy_engine(), lim);
  CHECK(whole.whole == 2);
  CHECK(whole.chunk_bsz == 0);
  lim.quota_s = 258;
  const QuotaBatch cut = form_quota_batch({{0, 10}, {100, 10}}, toy_model(), toy_hw(), toy_engine(), lim);
  CHECK(cut.whole == 1);
  CHECK(cut.chunk_bsz == 2);
}

// ds660b on hopper-8x400g, by hand from the files' fields (one layer; the quota is DualPath's 300 ms):
//   main attention per (query, attended token) pair: 2 x heads x (qk_head_dim + v_head_dim)
//                                                    = 2 x 128 x (576 + 512) = 278,528 FLOPs
//   indexer per (query, scored token) pair:          2 x indexer_heads x indexer_head_dim
//                                                    = 2 x 64 x 128 = 16,384 FLOPs
//   main attention FLOP/s: gpu.flops x kernels.prefill_attention = 1.979e15 x 0.3234 = 6.400086e14
//   indexer FLOP/s:        gpu.flops x kernels.indexer           = 1.979e15 x 0.063  = 1.24677e14
// New token i of a chunk (cached c, bsz b) attends min(2048, c + i) tokens (sparse_topk 2048) and the
// indexer scores all c + i of them. The predicted time of a chunk is main FLOPs / 6.400086e14 + indexer
// FLOPs / 1.24677e14.
namespace {

constexpr double kMainFlops = 6.400086e14, kIndexerFlops = 1.24677e14;

struct Ds660b {
  config::ModelSpec m;
  config::HardwareSpec hw;
  config::EngineSpec e;
};

Ds660b ds660b() {
  auto m = config::load_model(std::string(DPSIM_SOURCE_DIR) + "/models/llm/ds660b.json");
  auto hw = config::load_hardware(std::string(DPSIM_SOURCE_DIR) + "/models/hardware/hopper-8x400g.json");
  REQUIRE(m.is_ok());
  REQUIRE(hw.is_ok());
  // The fields the hand arithmetic uses.
  REQUIRE(m->heads == 128);
  REQUIRE(m->qk_head_dim == 576);
  REQUIRE(m->v_head_dim == 512);
  REQUIRE(m->sparse_topk == 2048);
  REQUIRE(m->indexer_heads == 64);
  REQUIRE(m->indexer_head_dim == 128);
  REQUIRE(hw->gpu_flops == 1.979e15);
  // DeepSeek's kernels as the hand computations read them: the sparse prefill at 0.3234 of the FP8 peak, the
  // indexer at what the file had when this was written (tests/unit/paper_files.h).
  return {*m, *hw, sim::testing::pinned_engine()};
}

}  // namespace

TEST_CASE(
    "Batch quota: ds660b, 429-token appends on 32,768 cached at 300 ms -> 133 whole, the 134th cut to 352",
    "[unit]") {
  // The paper's trace (§3): 429 appended tokens on a ~32.7K context. With c = 32,768 >= 2048 every new
  // token attends exactly 2048 tokens, so a chunk of b tokens costs
  //   main 278,528 x 2048 b = 570,425,344 b FLOPs, indexer 16,384 x (32,768 b + b(b+1)/2)
  //   = 536,870,912 b + 8,192 b(b+1) FLOPs.
  //   b = 429: main 244,712,472,576 / 6.400086e14 = 0.3823581 ms; indexer 230,317,621,248 + 1,511,178,240
  //   = 231,828,799,488 / 1.24677e14 = 1.8594352 ms; 2.2417933 ms per request.
  //   133 requests: 0.2981585 s <= 0.3 s; 134: 0.3004003 s > it. Left for the 134th: 1.8415 ms.
  //   b = 352: main 200,789,721,088 (0.3137 ms), indexer 188,978,561,024 + 1,017,905,152 = 189,996,466,176
  //   (1.5239 ms): 1.8376392 ms fits (batch 0.2999961 s); b = 353: main 201,360,146,432, indexer
  //   190,539,120,640: 1.8428830 ms does not (batch 0.3000014 s).
  // A quota with the indexer at the main attention's rate would take 402 requests; at the GEMM rate more.
  const Ds660b d = ds660b();
  const std::vector<Chunk> cs(140, Chunk{32768, 429});
  BatchLimits lim;
  lim.quota_s = 0.3;
  const QuotaBatch b = form_quota_batch(cs, d.m, d.hw, d.e, lim);
  CHECK(b.whole == 133);
  CHECK(b.chunk_bsz == 352);
  CHECK(attention_time_s(d.m, d.hw, d.e, chunks_of(b, cs)) ==
        Approx(133 * (244'712'472'576.0 / kMainFlops + 231'828'799'488.0 / kIndexerFlops) +
               200'789'721'088.0 / kMainFlops + 189'996'466'176.0 / kIndexerFlops));
  CHECK(attention_time_s(d.m, d.hw, d.e, chunks_of(b, cs)) == Approx(0.2999961).epsilon(1e-6));
}

TEST_CASE("Batch quota: ds660b, a lone fresh prompt at 300 ms -> 16K joins whole, 64K is cut to 61,229",
          "[unit]") {
  // c = 0: tokens 1..2048 attend their causal prefix (2048 x 2049 / 2 = 2,098,176 pairs), every later one
  // 2048 tokens; the indexer scores b(b+1)/2 pairs. For b >= 2048:
  //   main 278,528 x (2,098,176 + 2048 (b - 2048)) = 570,425,344 b - 583,830,339,584 FLOPs;
  //   indexer 16,384 x b(b+1)/2 = 8,192 b(b+1) FLOPs.
  //   b = 16,384: main 8,762,018,496,512 (13.690 ms), indexer 2,199,157,473,280 (17.639 ms): 31.33 ms,
  //   fits whole.
  //   b = 61,229: main 34,342,743,048,192 (53.660 ms), indexer 30,712,231,280,640 (246.334 ms):
  //   0.2999942 s fits;
  //   b = 61,230: main 34,343,313,473,536, indexer 30,713,234,472,960: 0.3000031 s does not.
  const Ds660b d = ds660b();
  BatchLimits lim;
  lim.quota_s = 0.3;
  const QuotaBatch whole = form_quota_batch({{0, 16384}}, d.m, d.hw, d.e, lim);
  CHECK(whole.whole == 1);
  CHECK(whole.chunk_bsz == 0);
  CHECK(attention_time_s(d.m, d.hw, d.e, {{0, 16384}}) ==
        Approx(8'762'018'496'512.0 / kMainFlops + 2'199'157'473'280.0 / kIndexerFlops));
  const QuotaBatch b = form_quota_batch({{0, 65536}}, d.m, d.hw, d.e, lim);
  CHECK(b.whole == 0);
  CHECK(b.chunk_bsz == 61229);
}

}  // namespace sim::cost
