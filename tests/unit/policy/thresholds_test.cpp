// Algorithm 1's alpha and beta derived from the real hardware and model files, against hand computations.
#include "sim/policy/dualpath/thresholds.h"

#include <catch2/catch.hpp>
#include <string>

namespace sim::policy::dualpath {
namespace {

config::HardwareSpec hardware(const std::string& name) {
  auto hw = config::load_hardware(std::string(DPSIM_SOURCE_DIR) + "/models/hardware/" + name + ".json");
  REQUIRE(hw.is_ok());
  return *hw;
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
  hw.snic_bw_Bps = 50e9;
  hw.storage_efficiency = 1.0;
  CHECK(storage_read_Bps(hw) == 50e9);
  hw.storage_efficiency = 0.5;
  CHECK(storage_read_Bps(hw) == 25e9);
  hw.storage_bw_per_node_Bps = 40e9;  // an explicit backend replaces the efficiency (as the builder does)
  CHECK(storage_read_Bps(hw) == 40e9);
  hw.storage_bw_per_node_Bps = 80e9;  // a backend faster than the SNIC: the SNIC caps
  CHECK(storage_read_Bps(hw) == 50e9);
}

TEST_CASE("Thresholds alpha: real files -> storage rate x 3 s / KV bytes per token", "[unit]") {
  const auto hw = hardware("hopper-8x400g");  // 50 GB/s SNIC x 0.5 storage efficiency = 25 GB/s
  // ds27b: (656 + 68) B x 30 layers = 21,720 B/token -> 75e9 / 21,720 = 3,453,038.67 tokens.
  CHECK(alpha_tokens(hw, model("ds27b")) == Approx(75e9 / 21720).epsilon(1e-12));
  CHECK(alpha_tokens(hw, model("ds27b")) == Approx(3453038.67).epsilon(1e-8));
  // ds660b: (656 + 132) B x 61 = 48,068 B/token -> 1,560,289.59 tokens.
  CHECK(alpha_tokens(hw, model("ds660b")) == Approx(1560289.59).epsilon(1e-8));
  // qwen32b: 4096 B x 64 = 262,144 B/token -> 286,102.29 tokens.
  CHECK(alpha_tokens(hw, model("qwen32b")) == Approx(286102.295).epsilon(1e-8));
  // The 4-GPU node has the same SNIC and storage: the same alpha.
  CHECK(alpha_tokens(hardware("hopper-4x400g"), model("ds27b")) == Approx(3453038.67).epsilon(1e-8));
  // A longer window scales it.
  CHECK(alpha_tokens(hw, model("ds27b"), 6.0) == Approx(2 * 3453038.67).epsilon(1e-8));
}

TEST_CASE("Thresholds beta: real files, the paper's typical turn -> tokens one GPU prefills in 5 s",
          "[unit]") {
  const auto hw = hardware("hopper-8x400g");  // 1.979e15 FLOP/s
  // ds27b, per layer: attention = 2x32x1088 x (429 x 1024) [topk] + 2x32x64 x kCausal [indexer] FLOPs at
  // 1.979e15 x 0.3; linear = 2 x 4.289e9 / 30 x 429 FLOPs at 1.979e15 x 0.4. x 30 layers = 9.117 ms.
  const double ds27b_s = 30 * ((69632.0 * 429 * 1024 + 4096.0 * kCausal) / (1.979e15 * 0.3) +
                               2 * 4.289e9 / 30 * 429 / (1.979e15 * 0.4));
  CHECK(ds27b_s == Approx(9.117e-3).epsilon(1e-3));
  CHECK(beta_tokens(hw, model("ds27b")) == Approx(5 * 33129 / ds27b_s).epsilon(1e-12));
  CHECK(beta_tokens(hw, model("ds27b")) == Approx(18168766.2).epsilon(1e-8));
  // ds660b: 2x128x1088 x (429 x 2048) + 2x64x128 x kCausal at 1.979e15 x 0.045; 2 x 37e9 / 61 x 429 at
  // 1.979e15 x 0.45; x 61 layers = 0.3617 s.
  CHECK(beta_tokens(hw, model("ds660b")) == Approx(457915.93).epsilon(1e-8));
  // qwen32b (dense GQA, BF16 = 0.5 x the FP8 peak): 2x40x256 x kCausal and 2 x 31.985e9 / 64 x 429, both
  // at 1.979e15 x 0.5 x 0.5; x 64 layers = 92.88 ms.
  CHECK(beta_tokens(hw, model("qwen32b")) == Approx(1783476.12).epsilon(1e-8));
}

TEST_CASE("Thresholds beta: the per-batch layer overhead -> not charged to the typical request", "[unit]") {
  const auto hw = hardware("hopper-8x400g");
  auto m = model("ds27b");
  const double with_default = beta_tokens(hw, m);
  m.prefill_layer_overhead_s = 1.0;
  CHECK(beta_tokens(hw, m) == with_default);
}

TEST_CASE("Thresholds beta: a workload's own typical turn and window -> scale as defined", "[unit]") {
  const auto hw = hardware("hopper-8x400g");
  const auto m = model("qwen32b");
  // Dense model, no cache: one chunk of 1000 new tokens: attention 2x40x256 x (1000 x 1001 / 2),
  // linear 2 x 31.985e9 / 64 x 1000, both at 1.979e15 x 0.25, x 64 layers.
  const double s = 64 * (20480.0 * 500500 + 2 * 31.985e9 / 64 * 1000) / (1.979e15 * 0.25);
  CHECK(beta_tokens(hw, m, cost::Chunk{0, 1000}) == Approx(5 * 1000 / s).epsilon(1e-12));
  CHECK(beta_tokens(hw, m, cost::Chunk{0, 1000}, 10.0) == Approx(10 * 1000 / s).epsilon(1e-12));
}

TEST_CASE("Thresholds override: a configured value > 0 -> wins over the derived one; 0 -> derived",
          "[unit]") {
  CHECK(resolve_threshold(0, 123) == 123);
  CHECK(resolve_threshold(5e5, 123) == 5e5);
}

}  // namespace sim::policy::dualpath
