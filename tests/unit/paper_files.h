// The project's model, hardware and engine files as the unit tests' hand computations read them.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "tests/unit/config/config_fixtures.h"

namespace sim::testing {

inline config::ModelSpec real_model(const std::string& name) {
  StatusOr<config::ModelSpec> m =
      config::load_model(std::string(DPSIM_SOURCE_DIR) + "/models/llm/" + name + ".json");
  INFO(config::testing::error_of(m));
  REQUIRE(m.is_ok());
  return *m;
}

inline config::HardwareSpec real_hardware(const std::string& name) {
  StatusOr<config::HardwareSpec> hw =
      config::load_hardware(std::string(DPSIM_SOURCE_DIR) + "/models/hardware/" + name + ".json");
  INFO(config::testing::error_of(hw));
  REQUIRE(hw.is_ok());
  return *hw;
}

inline config::EngineSpec real_engine(const std::string& name) {
  StatusOr<config::EngineSpec> e =
      config::load_engine(std::string(DPSIM_SOURCE_DIR) + "/models/engine/" + name + ".json");
  INFO(config::testing::error_of(e));
  REQUIRE(e.is_ok());
  return *e;
}

// hopper-8x400g for hand computations. The REQUIREs pin the published numbers the arithmetic reads (a
// changed file fails here, not as a wrong number).
inline config::HardwareSpec pinned_hopper() {
  config::HardwareSpec hw = real_hardware("hopper-8x400g");
  REQUIRE(hw.gpus_per_node == 8);
  REQUIRE(hw.gpu_flops == 1.979e15);
  REQUIRE(hw.gpu_bf16_flops == 989e12);
  REQUIRE(hw.gpu_hbm_bw_Bps == 3.35e12);
  REQUIRE(hw.nvlink_bw_Bps == 160e9);
  REQUIRE(hw.snic_bw_Bps == 50e9);
  REQUIRE(hw.storage_bw_per_node_Bps == 0);
  return hw;
}

// The kernel rates of DeepSeek's kernels for hand computations: the published fractions (FlashMLA, DeepGEMM)
// as the tests were written, with the CALIBRATION values (kernels.indexer, storage.request_overhead_s) and
// the fixed costs set to the values of that time, so that refitting or resourcing a value of a shipped
// engine file does not move every hand computation; what the files hold now is checked once, in
// tests/unit/config/engine_test.cpp. Nothing beyond the kernels' rates: ideal overlap, no pass cap, no MTP,
// perfect expert balance, no CPU time.
inline config::EngineSpec pinned_engine() {
  config::EngineSpec e;
  e.k_prefill_attention_mqa = e.k_prefill_attention_mha = 0.3234;
  e.k_decode_attention_dense = e.k_decode_attention_sparse = 0.2072;
  e.k_gemm = 0.6468;
  e.k_gemm_hbm = 0.7964;
  e.k_attention_hbm = 0.8955;
  e.storage_efficiency = 0.859;
  e.k_indexer = 0.063;
  e.k_prefill_efficiency = 1;
  e.storage_request_overhead_s = 40e-6;
  return e;
}

// The rates of pinned_hopper() with pinned_engine() (gpu_rates of sim/cost/compute_model.h), by hand:
//   prefill attention 1.979e15 x 0.3234 = 6.400086e14 FLOP/s
//   decode attention  1.979e15 x 0.2072 = 4.100488e14 FLOP/s
//   DSA indexer       1.979e15 x 0.063  = 1.24677e14 FLOP/s (prefill and decode)
//   GEMM (FP8)        1.979e15 x 0.6468 = 1.2800172e15 FLOP/s;  GEMM (BF16) 989e12 x 0.6468 = 6.396852e14
//   weight reads      3.35e12 x 0.7964  = 2.66794e12 B/s
//   KV reads          3.35e12 x 0.8955  = 2.999925e12 B/s
inline constexpr double kRpa = 6.400086e14, kRda = 4.100488e14, kRidx = 1.24677e14;
inline constexpr double kRgemm = 1.2800172e15, kRgemmBf16 = 6.396852e14;
inline constexpr double kRwb = 2.66794e12, kRkv = 2.999925e12;

// The routed experts of DeepSeek-V3 and V3.2 (ds660b, dsv3) as the hand computations read them.
inline void pin_deepseek_moe(const config::ModelSpec& m) {
  REQUIRE(m.moe_layers == 58);
  REQUIRE(m.routed_experts == 256);
  REQUIRE(m.active_experts == 8);
  REQUIRE(m.expert_params == 44040192);
  REQUIRE(m.shared_params == 44040192);
  REQUIRE(m.hidden == 7168);
  REQUIRE(m.max_nodes_per_token == 4);
  REQUIRE(m.expert_groups == 8);
  REQUIRE(m.dispatch_bytes_per_value == 1.03125);
  REQUIRE(m.combine_bytes_per_value == 2);
}

// ds660b for hand computations: the REQUIREs pin every field the arithmetic reads, so a changed file fails
// here rather than as a wrong number.
inline config::ModelSpec pinned_ds660b() {
  config::ModelSpec m = real_model("ds660b");
  REQUIRE(m.layers == 61);
  REQUIRE(m.active_params == 37477143296);
  REQUIRE(m.total_params == 671877944064);
  REQUIRE(m.replicated_params == 17969173248);
  REQUIRE(m.weight_bytes_per_param == 1);
  REQUIRE(m.weight_shards == 16);
  REQUIRE(m.heads == 128);
  REQUIRE(m.qk_head_dim == 576);
  REQUIRE(m.v_head_dim == 512);
  REQUIRE(m.sparse_topk == 2048);
  REQUIRE(m.indexer_heads == 64);
  REQUIRE(m.indexer_head_dim == 128);
  pin_deepseek_moe(m);
  REQUIRE(m.gemm_precision == "fp8");
  return m;
}

// The share of ds660b's layers that are MoE layers: moe.layers / layers = 58 / 61 (pinned_ds660b()).
inline constexpr double kMoeShare = 58.0 / 61;

}  // namespace sim::testing
