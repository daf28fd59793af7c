// Model loader (sim/config/model_spec.h) and the closed-form cost models (sim/cost/compute_model.h),
// including the paper's Table 1 cache-compute ratios computed from the real model files.
#include "sim/cost/compute_model.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/config/config_fixtures.h"

namespace sim::cost {
namespace {

using Catch::Matchers::Contains;
using config::HardwareSpec;
using config::ModelSpec;
using config::testing::error_of;
using config::testing::ScratchDir;

std::string model_path(const std::string& name) {
  return std::string(DPSIM_SOURCE_DIR) + "/models/llm/" + name + ".json";
}

ModelSpec real_model(const std::string& name) {
  StatusOr<ModelSpec> m = config::load_model(model_path(name));
  INFO(error_of(m));
  REQUIRE(m.is_ok());
  return *m;
}

// A minimal valid model file; `extra` is spliced in at the top level.
std::string minimal_json(const std::string& extra = "") {
  return R"({"layers": 2, "params": {"active": 1e9, "total": 2e9}, "kv": {"bytes_per_token_layer": 100},
             "attention": {"kind": "gqa", "heads": 4, "qk_head_dim": 8, "v_head_dim": 8})" +
         extra + "}";
}

// A small hand-made model whose FLOPs are easy to count by hand.
ModelSpec toy_model(int topk) {
  ModelSpec m;
  m.layers = 2;
  m.active_params = 1e9;
  m.total_params = 1e9;
  m.heads = 2;
  m.qk_head_dim = 3;
  m.v_head_dim = 2;  // 2 x 2 x (3 + 2) = 20 FLOPs per attended token
  m.sparse_topk = topk;
  m.indexer_heads = topk > 0 ? 1 : 0;
  m.indexer_head_dim = topk > 0 ? 4 : 0;  // 8 FLOPs per indexed token
  m.main_kv_bytes_per_token_layer = 10;
  m.indexer_kv_bytes_per_token_layer = topk > 0 ? 2 : 0;
  return m;
}

TEST_CASE("ModelSpec: the three model files -> load with their documented values", "[unit]") {
  ModelSpec ds = real_model("ds660b");
  CHECK(ds.name == "ds660b");
  CHECK(ds.layers == 61);
  CHECK(ds.attention == "mla");
  CHECK(ds.main_kv_bytes_per_token_layer == 656);
  CHECK(ds.indexer_kv_bytes_per_token_layer == 132);
  CHECK(ds.sparse_topk == 2048);
  CHECK(ds.sources.count("params.active") == 1);
  ModelSpec small = real_model("ds27b");
  CHECK(small.layers == 30);
  CHECK(small.heads == 32);
  CHECK(small.sparse_topk == 1024);
  CHECK(small.indexer_heads == 32);
  CHECK(small.indexer_head_dim == 64);
  CHECK(small.total_params == Approx(27.2e9).epsilon(0.01));
  ModelSpec qwen = real_model("qwen32b");
  CHECK(qwen.layers == 64);
  CHECK(qwen.heads == 40);
  CHECK_FALSE(qwen.sparse());
  CHECK(qwen.weight_shards == 1);
}

TEST_CASE("ModelSpec: every number in the model files -> has a source", "[unit]") {
  for (const char* name : {"ds660b", "ds27b", "qwen32b"}) {
    std::ifstream in(model_path(name));
    nlohmann::json doc = nlohmann::json::parse(in);
    std::vector<std::string> missing;
    for (const char* section : {"params", "kv", "attention", "efficiency"})
      for (auto it = doc.at(section).begin(); it != doc.at(section).end(); ++it)
        if (!doc.at("sources").contains(std::string(section) + "." + it.key()))
          missing.push_back(std::string(section) + "." + it.key());
    for (const char* top : {"layers", "max_context_tokens"})
      if (!doc.at("sources").contains(top)) missing.push_back(top);
    INFO(name);
    CHECK(missing.empty());
  }
}

TEST_CASE("ModelSpec: a minimal file -> documented defaults", "[unit]") {
  ScratchDir dir;
  StatusOr<ModelSpec> m = config::load_model(dir.write("tiny-model.json", minimal_json()));
  INFO(error_of(m));
  REQUIRE(m.is_ok());
  const ModelSpec def;
  CHECK(m->name == "tiny-model");
  CHECK(m->max_context == 131072);
  CHECK(m->weight_bytes_per_param == 2);
  CHECK(m->weight_shards == 1);
  CHECK(m->replicated_params == 0);
  CHECK(m->sparse_topk == 0);
  CHECK(m->indexer_kv_bytes_per_token_layer == 0);
  CHECK(m->peak_flops_factor == 1.0);
  CHECK(m->prefill_mfu == def.prefill_mfu);
  CHECK(m->decode_step_overhead_s == def.decode_step_overhead_s);
  CHECK(m->hbm_reserve_bytes == def.hbm_reserve_bytes);
}

TEST_CASE("ModelSpec: bad inputs -> errors naming the file and the JSON path", "[unit]") {
  ScratchDir dir;
  auto load = [&](const std::string& text) {
    return error_of(config::load_model(dir.write("m.json", text)));
  };
  std::string file = dir.path("m.json");

  std::string e = load(minimal_json(R"(, "efficiency": {"prefill_mfu": 1.5})"));
  CHECK_THAT(e, Contains(file + ": efficiency.prefill_mfu: expected a number > 0 and <= 1, got 1.5"));
  CHECK_THAT(load(minimal_json(R"(, "efficiency": {"decode_mfu_typo": 0.5})")),
             Contains("efficiency.decode_mfu_typo: unknown key"));
  CHECK_THAT(load(minimal_json(R"(, "colour": "red")")), Contains("colour: unknown key"));
  CHECK_THAT(load(R"({"layers": 2, "params": {"active": 1e9}, "kv": {"bytes_per_token_layer": 1},
                      "attention": {"kind": "gqa", "heads": 1, "qk_head_dim": 1, "v_head_dim": 1}})"),
             Contains("params.total: expected a number > 0, got nothing"));
  CHECK_THAT(
      load(R"({"layers": 2, "params": {"active": 3e9, "total": 2e9}, "kv": {"bytes_per_token_layer": 1},
                      "attention": {"kind": "gqa", "heads": 1, "qk_head_dim": 1, "v_head_dim": 1}})"),
      Contains("params.active: expected a number <= params.total"));
  CHECK_THAT(load(R"({"layers": 0, "params": {"active": 1, "total": 2}, "kv": {"bytes_per_token_layer": 1},
                      "attention": {"kind": "gqa", "heads": 1, "qk_head_dim": 1, "v_head_dim": 1}})"),
             Contains("layers: expected an integer in [1, 10000], got 0"));
  CHECK_THAT(load(R"({"layers": 2, "params": {"active": 1, "total": 2}, "kv": {"bytes_per_token_layer": 1},
                      "attention": {"kind": "mha", "heads": 1, "qk_head_dim": 1, "v_head_dim": 1}})"),
             Contains("attention.kind: expected one of mla, gqa"));
  CHECK_THAT(load(R"({"layers": 2, "params": {"active": 1, "total": 2}, "kv": {"bytes_per_token_layer": 1},
                      "attention": {"kind": "mla", "heads": 1, "qk_head_dim": 1, "v_head_dim": 1,
                                    "sparse_topk": 64}})"),
             Contains("attention.indexer_heads: expected an integer >= 1 when attention.sparse_topk > 0"));
  CHECK_THAT(load(R"({"layers": 2, "params": {"active": 1, "total": 2},
                      "kv": {"bytes_per_token_layer": 1, "indexer_bytes_per_token_layer": 5},
                      "attention": {"kind": "gqa", "heads": 1, "qk_head_dim": 1, "v_head_dim": 1}})"),
             Contains("kv.indexer_bytes_per_token_layer: expected 0 for dense attention"));
  CHECK_THAT(load(minimal_json(R"(, "sources": {"params.activ": "typo"})")),
             Contains(file + ": sources.params.activ: expected the path of a field of this file"));
  CHECK_THAT(load(minimal_json(R"(, "params": {"active": 1, "total": 2}, "x": 1)")), Contains(file));
}

TEST_CASE("KV bytes: DeepSeek-V3.2 and Qwen2.5-32B -> FP8 MLA with indexer keys and FP16 GQA", "[unit]") {
  ModelSpec ds = real_model("ds660b");
  CHECK(kv_bytes_per_token_layer(ds) == 656 + 132);
  CHECK(kv_bytes_per_token(ds) == (656 + 132) * 61);
  CHECK(main_kv_bytes_per_token(ds) == 656 * 61);  // ~40 KB/token (PAPER.md §3.3)
  ds.indexer_keys_in_cache = false;
  CHECK(kv_bytes_per_token(ds) == 656 * 61);
  ModelSpec qwen = real_model("qwen32b");
  CHECK(kv_bytes_per_token(qwen) == 256 * 1024);  // 256 KiB/token (PAPER.md §3.3)
}

TEST_CASE("Attention FLOPs: hand-counted chunks -> causal sums with a top-k cap and a dense indexer",
          "[unit]") {
  ModelSpec dense = toy_model(0);
  // New tokens attend to 11, 12, 13 tokens.
  CHECK(attended_tokens(dense, {10, 3}) == 36);
  CHECK(attention_flops(dense, {10, 3}) == 20 * 36);
  CHECK(indexed_tokens(dense, {10, 3}) == 0);
  ModelSpec sparse = toy_model(12);
  // min(12, 11..15) = 11 + 12 + 12 + 12 + 12; the indexer scores 11 + ... + 15 = 65 tokens.
  CHECK(attended_tokens(sparse, {10, 5}) == 59);
  CHECK(indexed_tokens(sparse, {10, 5}) == 65);
  CHECK(attention_flops(sparse, {10, 5}) == 20 * 59 + 8 * 65);
  // From an empty cache past the cap: 1 + ... + 12, then 12 per token.
  CHECK(attended_tokens(sparse, {0, 20}) == 78 + 8 * 12);
  CHECK(linear_flops(dense, 3) == 2 * 1e9 / 2 * 3);
  CHECK(prefill_flops(dense, {10, 3}) == 2 * (20 * 36 + 3e9));
}

TEST_CASE("Attention time: more cached or new tokens -> longer but sparse attention saturates past top-k",
          "[unit]") {
  const HardwareSpec hw;
  ModelSpec qwen = real_model("qwen32b");
  double base = attention_time_s(qwen, hw, {{1000, 500}});
  CHECK(attention_time_s(qwen, hw, {{2000, 500}}) > base);
  CHECK(attention_time_s(qwen, hw, {{1000, 600}}) > base);
  CHECK(attention_time_s(qwen, hw, {{1000, 500}, {0, 10}}) > base);

  ModelSpec ds = real_model("ds660b");
  const double per_indexed = 2.0 * 64 * 128;
  // Past top-k only the indexer grows with the context: exactly bsz x delta x its per-token FLOPs.
  double grow = attention_flops(ds, {40000, 100}) - attention_flops(ds, {30000, 100});
  CHECK(grow == Approx(per_indexed * 100 * 10000).epsilon(1e-12));
  ModelSpec no_indexer = ds;
  no_indexer.indexer_heads = 0;
  CHECK(attention_flops(no_indexer, {40000, 100}) == attention_flops(no_indexer, {30000, 100}));
  CHECK(attention_flops(no_indexer, {1000, 100}) < attention_flops(no_indexer, {3000, 100}));
  CHECK(attention_time_s(ds, hw, {{40000, 100}}) > attention_time_s(ds, hw, {{30000, 100}}));
}

TEST_CASE("Layer time: a batch -> attention + linear + fixed overhead and nothing to compute -> 0",
          "[unit]") {
  const HardwareSpec hw;
  ModelSpec ds = real_model("ds660b");
  std::vector<Chunk> cs{{30000, 400}, {0, 1000}};
  double expected = attention_time_s(ds, hw, cs) + linear_time_s(ds, hw, 1400) + ds.prefill_layer_overhead_s;
  CHECK(layer_time_s(ds, hw, cs) == Approx(expected).epsilon(1e-12));
  CHECK(linear_time_s(ds, hw, 1400) == Approx(2 * 37e9 / 61 * 1400 / (hw.gpu_flops * ds.prefill_mfu)));
  CHECK(layer_time_s(ds, hw, {}) == 0);
  CHECK(layer_time_s(ds, hw, {{5000, 0}}) == 0);
  ModelSpec qwen = real_model("qwen32b");  // BF16: half the hardware's FP8 peak
  CHECK(linear_time_s(qwen, hw, 100) ==
        Approx(2 * qwen.active_params / 64 * 100 / (hw.gpu_flops * 0.5 * qwen.prefill_mfu)));
}

TEST_CASE("Decode step: small batch -> memory-bound and growing with batch and context", "[unit]") {
  const HardwareSpec hw;
  ModelSpec qwen = real_model("qwen32b");
  const double bw = hw.gpu_hbm_bw_Bps * qwen.decode_hbm_efficiency;
  CHECK(decode_step_time_s(qwen, hw, 0, 0, qwen.weight_shards) == 0);
  double t1 = decode_step_time_s(qwen, hw, 1, 10000, qwen.weight_shards);
  CHECK(t1 == Approx((qwen.weight_bytes_per_gpu() + 10000 * 262144.0) / bw + qwen.decode_step_overhead_s));
  // Dense, memory-bound: each extra context token adds its KV bytes.
  double t2 = decode_step_time_s(qwen, hw, 1, 20000, qwen.weight_shards);
  CHECK(t2 - t1 == Approx(10000 * 262144.0 / bw).epsilon(1e-9));
  CHECK(decode_step_time_s(qwen, hw, 8, 20000, qwen.weight_shards) >= t2);
  // Very large batches become compute-bound: the step then grows with the batch.
  double big = decode_step_time_s(qwen, hw, 4096, 4096.0 * 100, qwen.weight_shards);
  double compute = decode_step_flops(qwen, 4096, 4096.0 * 100) / (hw.gpu_flops * 0.5 * qwen.decode_mfu);
  CHECK(big == Approx(compute + qwen.decode_step_overhead_s));
  CHECK(decode_step_time_s(qwen, hw, 8192, 8192.0 * 100, qwen.weight_shards) > big);

  // Sparse: one request's main-cache reads stop growing past top-k; the indexer keys still grow.
  ModelSpec ds = real_model("ds660b");
  double b10 = decode_step_hbm_bytes(ds, 1, 10000, ds.weight_shards);
  double b20 = decode_step_hbm_bytes(ds, 1, 20000, ds.weight_shards);
  CHECK(b20 - b10 == Approx(132.0 * 61 * 10000));
  CHECK(b10 == Approx(ds.weight_bytes_per_gpu() + 61 * (656.0 * 2048 + 132.0 * 10000)));
  CHECK(decode_step_time_s(ds, hw, 64, 64 * 32000.0, ds.weight_shards) >
        decode_step_time_s(ds, hw, 32, 32 * 32000.0, ds.weight_shards));
}

TEST_CASE("HBM for KV: the three models on an 80 GB GPU -> room left but too few shards -> 0", "[unit]") {
  const HardwareSpec hw;  // Hopper defaults: 80 GB
  for (const char* name : {"ds660b", "ds27b", "qwen32b"}) {
    ModelSpec m = real_model(name);
    INFO(name << ": " << hbm_kv_bytes_per_gpu(m, hw) / 1e9 << " GB");
    CHECK(hbm_kv_bytes_per_gpu(m, hw) > 1e9);
  }
  ModelSpec qwen = real_model("qwen32b");  // DP-only: the whole BF16 model on each GPU
  CHECK(qwen.weight_bytes_per_gpu() == Approx(65.5e9).epsilon(0.01));
  CHECK(hbm_kv_bytes_per_gpu(qwen, hw) == Approx(80e9 - 2 * 32.764e9 - 4e9));
  ModelSpec ds = real_model("ds660b");
  CHECK(hbm_kv_bytes_per_gpu(ds, hw, 8) == 0);  // 671 GB of FP8 weights do not fit one 8-GPU node
  CHECK(hbm_kv_bytes_per_gpu(ds, hw, 32) > hbm_kv_bytes_per_gpu(ds, hw, 16));
}

TEST_CASE(
    "Cache-compute ratio: DeepSeek-V3.2 at 32.7K context with 429 appended -> about 22 GB/PFLOP (Table 1)",
    "[unit]") {
  ModelSpec ds = real_model("ds660b");
  double r = cache_compute_ratio_gb_per_pflop(ds, 32721, 429);
  INFO("ratio " << r);
  CHECK(r == Approx(22).margin(3));
  // Per-token compute at 32.7K: 74 (linear) + ~35 (top-2048) + ~33 (indexer) ~ 142 GFLOP (PAPER.md §3.3).
  CHECK(prefill_flops(ds, {32721, 1}) / 1e9 == Approx(142).epsilon(0.03));
  // Table 1's 13-36 over 16K-64K (only the range is given).
  CHECK(cache_compute_ratio_gb_per_pflop(ds, 16384, 429) == Approx(13).epsilon(0.1));
  CHECK(cache_compute_ratio_gb_per_pflop(ds, 65536, 429) == Approx(36).epsilon(0.1));
}

TEST_CASE("Cache-compute ratio: Qwen2.5-32B FP16 over 16K-64K -> 117-267 GB/PFLOP (Table 1)", "[unit]") {
  ModelSpec qwen = real_model("qwen32b");
  double lo = cache_compute_ratio_gb_per_pflop(qwen, 16384, 429);
  double hi = cache_compute_ratio_gb_per_pflop(qwen, 65536, 429);
  INFO("ratio " << lo << " .. " << hi);
  CHECK(lo == Approx(117).epsilon(0.05));
  CHECK(hi == Approx(267).epsilon(0.05));
  CHECK(cache_compute_ratio_gb_per_pflop(qwen, 32768, 429) > lo);
}

}  // namespace
}  // namespace sim::cost
