// Algorithm 1's alpha and beta derived from the real hardware and model files, against hand computations.
#include "sim/policy/dualpath/thresholds.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/paper_files.h"

namespace sim::policy::dualpath {
namespace {

config::HardwareSpec hardware(const std::string& name) {
  auto hw = config::load_hardware(std::string(DPSIM_SOURCE_DIR) + "/models/hardware/" + name + ".json");
  REQUIRE(hw.is_ok());
  return *hw;
}

// hopper-8x400g for the hand computations: the published numbers the arithmetic reads are pinned by
// REQUIREs.
config::HardwareSpec hopper() {
  return testing::pinned_hopper();
}

// DeepSeek's kernels and the 3FS client for the hand computations (tests/unit/paper_files.h): the storage
// efficiency 0.859 and the per-block cost (a CALIBRATION value) as the tests were written.
config::EngineSpec kernels() {
  return testing::pinned_engine();
}

config::ModelSpec model(const std::string& name) {
  auto m = config::load_model(std::string(DPSIM_SOURCE_DIR) + "/models/llm/" + name + ".json");
  REQUIRE(m.is_ok());
  return *m;
}

// Sum over i = 1..429 of (32700 + i): the tokens a dense attention (or the DSA indexer) reads for the
// paper's typical turn.
constexpr double kCausal = 429.0 * 32700 + 429.0 * 430 / 2;  // 14,120,535

}  // namespace

TEST_CASE("Thresholds storage rate: SNIC, efficiency and per-node cap -> the slowest of the chain",
          "[unit]") {
  config::HardwareSpec hw;
  config::EngineSpec client;
  hw.snic_bw_Bps = 50e9;
  client.storage_efficiency = 1.0;
  CHECK(storage_read_Bps(hw, client) == 50e9);
  client.storage_efficiency = 0.5;
  CHECK(storage_read_Bps(hw, client) == 25e9);
  hw.storage_bw_per_node_Bps = 40e9;  // an explicit backend replaces the efficiency (as the builder does)
  CHECK(storage_read_Bps(hw, client) == 40e9);
  hw.storage_bw_per_node_Bps = 80e9;  // a backend faster than the SNIC: the SNIC caps
  CHECK(storage_read_Bps(hw, client) == 50e9);
}

TEST_CASE("Thresholds storage rate: a per-block overhead -> small blocks read slower than large ones",
          "[unit]") {
  const auto hw = hopper();
  // E = 0.859 x 50e9 = 42.95e9 B/s; E x t = 42.95e9 x 40e-6 = 1,718,000 B.
  //   large blocks (0): 42.95e9;
  //   64 tokens of ds660b = 64 x 48,068 = 3,076,352 B: 42.95e9 x 3,076,352 / (3,076,352 + 1,718,000)
  //   = 42.95e9 x 3,076,352 / 4,794,352 = 27.559370e9 B/s.
  CHECK(storage_read_Bps(hw, kernels()) == Approx(42.95e9).epsilon(1e-12));
  CHECK(storage_read_Bps(hw, kernels(), 3076352) == Approx(42.95e9 * 3076352 / 4794352).epsilon(1e-12));
  CHECK(storage_read_Bps(hw, kernels(), 3076352) == Approx(27.559370e9).epsilon(1e-7));
}

TEST_CASE("Thresholds alpha: real files -> storage rate x 3 s / KV bytes per token", "[unit]") {
  const auto hw = hopper();  // 50 GB/s SNIC x 0.859 storage efficiency = 42.95 GB/s
  // Large blocks (block_tokens 0): no per-block overhead, 42.95e9 x 3 = 128.85e9 bytes in the window.
  // ds27b: (656 + 68) B x 30 layers = 21,720 B/token -> 128.85e9 / 21,720 = 5,932,320.44 tokens.
  CHECK(alpha_tokens(hw, kernels(), model("ds27b")) == Approx(128.85e9 / 21720).epsilon(1e-12));
  CHECK(alpha_tokens(hw, kernels(), model("ds27b")) == Approx(5932320.44).epsilon(1e-8));
  // ds660b: (656 + 132) B x 61 = 48,068 B/token -> 2,680,577.52 tokens.
  CHECK(alpha_tokens(hw, kernels(), model("ds660b")) == Approx(2680577.52).epsilon(1e-8));
  // qwen32b: 4096 B x 64 = 262,144 B/token -> 491,523.74 tokens.
  CHECK(alpha_tokens(hw, kernels(), model("qwen32b")) == Approx(491523.74).epsilon(1e-8));
  // The 4-GPU node has the same SNIC and storage: the same alpha, at any block size.
  CHECK(alpha_tokens(hardware("hopper-4x400g"), kernels(), model("ds27b")) ==
        alpha_tokens(hardware("hopper-8x400g"), kernels(), model("ds27b")));
  CHECK(alpha_tokens(hardware("hopper-4x400g"), kernels(), model("ds660b"), 3.0, 64) ==
        alpha_tokens(hardware("hopper-8x400g"), kernels(), model("ds660b"), 3.0, 64));
  // A longer window scales it.
  CHECK(alpha_tokens(hw, kernels(), model("ds27b"), 6.0) == Approx(2 * 5932320.44).epsilon(1e-8));
  // Full Blocks of 64 tokens: ds660b reads at 27.559370e9 B/s (above): 27.559370e9 x 3 / 48,068
  // = 1,720,023.89 tokens. An alpha that ignores the block size would stay at 2,680,577.52.
  CHECK(alpha_tokens(hw, kernels(), model("ds660b"), 3.0, 64) == Approx(1720023.89).epsilon(1e-8));
}

TEST_CASE("Thresholds beta: real files, the paper's typical turn -> tokens one GPU prefills in 5 s",
          "[unit]") {
  // hopper() rates: prefill attention 1.979e15 x 0.3234 = 6.400086e14 FLOP/s; DSA indexer 1.979e15 x 0.063
  // = 1.24677e14; GEMM 1.979e15 x 0.6468 = 1.2800172e15 (FP8) or 989e12 x 0.6468 = 6.396852e14 (BF16);
  // weight reads 3.35e12 x 0.7964 = 2.66794e12 B/s. The typical turn: 32,700 cached, 429 new;
  // kCausal = 14,120,535.
  const auto hw = hopper();
  // ds27b (30 layers, EP8 = params.weight_shards), per layer:
  //   main attention 2x32x1088 x (429 x 1024) [topk] = 30,589,059,072 FLOPs / 6.400086e14 = 47.7948 us;
  //   indexer 2x32x64 x kCausal = 57,837,711,360 FLOPs / 1.24677e14 = 463.9004 us;
  //   dense (4.289e9 - 29 x 6 x 11,796,480) / 30 = 74,547,082.67 params: 2 x 74,547,082.67 x 429
  //     = 63,961,396,928 FLOPs / 1.2800172e15 = 49.9692 us (> weights ((2.567e9 + 24.631e9 / 8)
  //     - 24,631,050,240 / 8) / 30 = 85,566,457.33 B / 2.66794e12 = 32.0721 us);
  //   experts 429 x 6 = 2574 pairs on 72 / 8 = 9 experts: 2 x 11,796,480 x 2574 = 60,728,279,040 FLOPs
  //     / 1.2800172e15 = 47.4433 us (> 9 x 11,796,480 / 2.66794e12 = 39.7941 us), x 29/30 = 45.8619 us;
  //   x 30 layers = 30 x 607.5262 us = 18.225787 ms; beta = 5 x 33,129 / 18.225787 ms = 9,088,496.50.
  const double ds27b_s = 30 * (30589059072.0 / 6.400086e14 + 57837711360.0 / 1.24677e14 +
                               63961396928.0 / 1.2800172e15 + 60728279040.0 / 1.2800172e15 * 29 / 30);
  CHECK(ds27b_s == Approx(18.225787e-3).epsilon(1e-6));
  CHECK(beta_tokens(hw, kernels(), model("ds27b")) == Approx(5 * 33129 / ds27b_s).epsilon(1e-9));
  CHECK(beta_tokens(hw, kernels(), model("ds27b")) == Approx(9088496.50).epsilon(1e-8));
  // ds660b (61 layers, EP16), per layer:
  //   main attention 2x128x1088 x (429 x 2048) = 244,712,472,576 FLOPs / 6.400086e14 = 382.3581 us;
  //   indexer 2x64x128 x kCausal = 231,350,845,440 FLOPs / 1.24677e14 = 1,855.6016 us;
  //   dense 2 x 279,385,150.95 x 429 = 239,712,459,515.8 FLOPs / 1.2800172e15 = 187.2728 us;
  //   experts 3432 pairs on 16 experts: weights 704,643,072 B / 2.66794e12 = 264.1150 us (> FLOPs
  //     302,291,877,888 / 1.2800172e15 = 236.1624 us), x 58/61 = 251.1258 us;
  //   x 61 = 61 x 2,676.3584 us = 163.257860 ms; beta = 5 x 33,129 / 163.257860 ms = 1,014,621.90.
  // (The old MFU model gave 457,915.93; the indexer at the main attention's rate would give 2,307,140.75.)
  const double ds660b_s = 61 * (244712472576.0 / 6.400086e14 + 231350845440.0 / 1.24677e14 +
                                239712459515.80328 / 1.2800172e15 + 704643072.0 / 2.66794e12 * 58 / 61);
  CHECK(ds660b_s == Approx(163.257860e-3).epsilon(1e-6));
  CHECK(beta_tokens(hw, kernels(), model("ds660b")) == Approx(5 * 33129 / ds660b_s).epsilon(1e-9));
  CHECK(beta_tokens(hw, kernels(), model("ds660b")) == Approx(1014621.90).epsilon(1e-8));
  // qwen32b (dense GQA, no indexer, BF16 GEMMs, one whole copy per GPU), per layer:
  //   attention 2x40x256 x kCausal = 289,188,556,800 FLOPs / 6.400086e14 = 451.8510 us;
  //   dense 2 x 31.985e9 / 64 x 429 = 428,798,906,250 FLOPs / 6.396852e14 = 670.3280 us (> weights
  //     32.764e9 x 2 / 64 = 1,023,875,000 B / 2.66794e12 = 383.7699 us);
  //   x 64 = 71.819460 ms; beta = 5 x 33,129 / 71.819460 ms = 2,306,408.33.
  const double qwen_s = 64 * (289188556800.0 / 6.400086e14 + 428798906250.0 / 6.396852e14);
  CHECK(qwen_s == Approx(71.819460e-3).epsilon(1e-6));
  CHECK(beta_tokens(hw, kernels(), model("qwen32b")) == Approx(5 * 33129 / qwen_s).epsilon(1e-9));
  CHECK(beta_tokens(hw, kernels(), model("qwen32b")) == Approx(2306408.33).epsilon(1e-8));
}

// The prefill unit's shards, not the model file's: DS 660B on DeepSeek's EP32 prefill units holds 8 experts
// per GPU instead of 16, so the request's expert work is FLOP-bound (236.1624 us, against 352,321,536 B of
// weights / 2.66794e12 = 132.0575 us) instead of weight-bound (264.1150 us); every other term is the EP16 one
// above.
//   x 61 = 161.636604 ms; beta = 5 x 33,129 / 161.636604 ms = 1,024,798.81.
TEST_CASE("Thresholds beta: DS 660B on EP32 prefill units -> the unit's experts per GPU, by hand", "[unit]") {
  const auto hw = hopper();
  const auto m = model("ds660b");
  const double ep32_s = 61 * (244712472576.0 / 6.400086e14 + 231350845440.0 / 1.24677e14 +
                              239712459515.80328 / 1.2800172e15 + 302291877888.0 / 1.2800172e15 * 58 / 61);
  CHECK(ep32_s == Approx(161.636604e-3).epsilon(1e-6));
  CHECK(beta_tokens(hw, kernels(), m, kPaperTypicalTurn, kBetaWindowS, 32) ==
        Approx(1024798.81).epsilon(1e-8));
  // 0 and the file's own 16 give the file's value.
  CHECK(beta_tokens(hw, kernels(), m, kPaperTypicalTurn, kBetaWindowS, 0) == beta_tokens(hw, kernels(), m));
  CHECK(beta_tokens(hw, kernels(), m, kPaperTypicalTurn, kBetaWindowS, 16) == beta_tokens(hw, kernels(), m));
}

TEST_CASE("Thresholds beta: the per-batch layer overhead -> not charged to the typical request", "[unit]") {
  const auto hw = hopper();
  auto e = kernels();
  const auto m = model("ds27b");
  const double with_default = beta_tokens(hw, e, m);
  e.prefill_layer_overhead_s = 1.0;
  CHECK(beta_tokens(hw, e, m) == with_default);
}

TEST_CASE("Thresholds beta: a workload's own typical turn and window -> scale as defined", "[unit]") {
  const auto hw = hopper();
  const auto m = model("qwen32b");
  // Dense model, no cache: one chunk of 1000 new tokens, per layer: attention 2x40x256 x (1000 x 1001 / 2)
  // = 10,250,240,000 FLOPs / 6.400086e14 = 16.0158 us; dense 2 x 31.985e9 / 64 x 1000 = 999,531,250,000
  // FLOPs / 6.396852e14 = 1,562.5362 us (compute-bound); x 64 layers = 101.027324 ms.
  const double s = 64 * (10250240000.0 / 6.400086e14 + 999531250000.0 / 6.396852e14);
  CHECK(s == Approx(101.027324e-3).epsilon(1e-6));
  CHECK(beta_tokens(hw, kernels(), m, cost::Chunk{0, 1000}) == Approx(5 * 1000 / s).epsilon(1e-9));
  CHECK(beta_tokens(hw, kernels(), m, cost::Chunk{0, 1000}, 10.0) == Approx(10 * 1000 / s).epsilon(1e-9));
}

TEST_CASE("Thresholds override: a configured value > 0 -> wins over the derived one, 0 -> derived",
          "[unit]") {
  CHECK(resolve_threshold(0, 123) == 123);
  CHECK(resolve_threshold(5e5, 123) == 5e5);
}

}  // namespace sim::policy::dualpath
