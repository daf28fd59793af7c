// Model loader (sim/config/model_spec.h) and the closed-form cost models (sim/cost/compute_model.h),
// including the paper's Table 1 cache-compute ratios computed from the real model files.
#include "sim/cost/compute_model.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/cost/compute_plan.h"
#include "tests/unit/config/config_fixtures.h"
#include "tests/unit/paper_files.h"

namespace sim::cost {
namespace {

using Catch::Matchers::Contains;
using config::EngineSpec;
using config::HardwareSpec;
using config::ModelSpec;
using config::testing::error_of;
using config::testing::ScratchDir;

using testing::real_hardware;
using testing::real_model;

std::string model_path(const std::string& name) {
  return std::string(DPSIM_SOURCE_DIR) + "/models/llm/" + name + ".json";
}

HardwareSpec hopper() {
  return testing::pinned_hopper();
}

EngineSpec kernels() {
  return testing::pinned_engine();
}

// ds660b on hopper-8x400g with DeepSeek's kernels, what the hand computations below use (all pinned:
// tests/unit/paper_files.h).
struct Ds660bHopper {
  ModelSpec m;
  HardwareSpec hw;
  EngineSpec e;
};

Ds660bHopper ds660b_hopper() {
  return {testing::pinned_ds660b(), hopper(), kernels()};
}

// One GPU's decode step in a group of `shards` GPUs that all hold the same batch (the plan of
// cost/compute_plan.h with the pinned engine: ideal overlap, so the step is its compute).
double decode_step_time_s(const ModelSpec& m, const HardwareSpec& hw, const EngineSpec& e, int batch,
                          double context, int shards) {
  return decode_step(m, hw, e, batch, context, EpGroup{shards, hw.gpus_per_node}).step_s;
}

// The rates of hopper() (gpu_rates), by hand: kRpa, kRda, kRidx, kRgemm, kRgemmBf16, kRwb and kRkv of
// tests/unit/paper_files.h.
using testing::kRda;
using testing::kRgemm;
using testing::kRgemmBf16;
using testing::kRidx;
using testing::kRkv;
using testing::kRpa;
using testing::kRwb;

// ds660b per-layer quantities, by hand (§"Compute" of models/llm/README.md):
//   routed active params  = moe.layers x active_experts x expert_params = 58 x 8 x 44,040,192
//                         = 20,434,649,088
//   dense active params per layer = (37,477,143,296 - 20,434,649,088) / 61 = 17,042,494,208 / 61
//                         = 279,385,150.95
//   routed params         = 58 x 256 x 44,040,192 = 653,908,770,816
//   weight bytes per GPU at 16 shards = (17,969,173,248 + (671,877,944,064 - 17,969,173,248) / 16) x 1
//                         = 17,969,173,248 + 40,869,298,176 = 58,838,471,424
//   dense weight bytes per layer at 16 shards = (58,838,471,424 - 653,908,770,816 / 16) / 61
//                         = 17,969,173,248 / 61 = 294,576,610.62 (the recounted total is the replicated part
//                         plus the routed experts, so the dense bytes do not depend on the shards)
//   at 32 shards: (17,969,173,248 + 20,434,649,088 - 20,434,649,088) / 61 = 294,576,610.62
//   the 16 experts of one GPU at EP16 (256 / 16) weigh 16 x 44,040,192 = 704,643,072 bytes per MoE layer.
constexpr double kDsDenseParams = 17042494208.0 / 61;
constexpr double kDsDenseBytes16 = 17969173248.0 / 61;
constexpr double kDsDenseBytes32 = (17969173248.0 + 20434649088.0 - 20434649088.0) / 61;
using testing::kMoeShare;  // moe.layers / layers

// A minimal valid model file; `extra` is spliced in at the top level.
std::string minimal_json(const std::string& extra = "") {
  return R"({"layers": 2, "params": {"active": 1e9, "total": 2e9}, "kv": {"bytes_per_token_layer": 100},
             "attention": {"kind": "gqa", "heads": 4, "qk_head_dim": 8, "v_head_dim": 8})" +
         extra + "}";
}

// A small hand-made model whose FLOPs are easy to count by hand.
ModelSpec toy_topk_model(int topk) {
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
  // Every section of the model format ("moe" is absent from dense models) and every top-level value. A key
  // outside these lists is reported too, so a new section cannot slip in undocumented: extend the lists.
  const std::set<std::string> sections = {"params", "kv", "attention", "moe", "compute"};
  const std::set<std::string> values = {"layers", "max_context_tokens", "mtp_modules"};
  const std::set<std::string> documentation = {"name", "notes", "sources"};
  // The hand-written files and the zoo imported by `dpsim model import` (models/llm/hf/zoo.tsv).
  for (const char* name : {"ds660b", "ds27b", "qwen32b", "dsv3", "llama-3.1-70b", "llama-3.1-405b",
                           "qwen3-32b", "qwen3-235b-a22b", "kimi-k2", "gpt-oss-120b"}) {
    std::ifstream in(model_path(name));
    REQUIRE(in);
    nlohmann::json doc = nlohmann::json::parse(in);
    const nlohmann::json& sources = doc.at("sources");
    std::string missing;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (sections.count(it.key())) {
        for (auto f = it->begin(); f != it->end(); ++f)
          if (!sources.contains(it.key() + "." + f.key())) missing += " " + it.key() + "." + f.key();
      } else if (values.count(it.key())) {
        if (!sources.contains(it.key())) missing += " " + it.key();
      } else if (!documentation.count(it.key())) {
        missing += " (unknown to this test) " + it.key();
      }
    }
    INFO(name << " lacks a source for:" << missing);
    CHECK(missing.empty());
    // The new sections are there to be checked: both DeepSeek models are MoE, every model has compute.
    CHECK(doc.contains("compute"));
    const std::set<std::string> dense = {"qwen32b", "llama-3.1-70b", "llama-3.1-405b", "qwen3-32b"};
    CHECK(doc.contains("moe") == (dense.count(name) == 0));
  }
}

TEST_CASE("ModelSpec: the MoE sections of the model files -> the public configs' numbers", "[unit]") {
  ModelSpec ds = real_model("ds660b");
  CHECK(ds.moe());
  CHECK(ds.moe_layers == 58);
  CHECK(ds.routed_experts == 256);
  CHECK(ds.active_experts == 8);
  CHECK(ds.expert_params == 3.0 * 7168 * 2048);
  CHECK(ds.hidden == 7168);
  CHECK(ds.max_nodes_per_token == 4);
  CHECK(ds.dispatch_bytes_per_value == 1 + 4.0 / 128);
  CHECK(ds.combine_bytes_per_value == 2);
  CHECK(ds.gemm_precision == "fp8");
  // 58 x 256 x 44,040,192 = 653.9e9 of the 671.9e9 parameters are routed experts; 58 x 8 x 44,040,192 =
  // 20.4e9 of the 37.5e9 active ones.
  CHECK(ds.routed_params() == 653908770816.0);
  CHECK(ds.routed_active_params() == 20434649088.0);
  ModelSpec small = real_model("ds27b");
  CHECK(small.moe_layers == 29);
  CHECK(small.routed_experts == 72);
  CHECK(small.active_experts == 6);
  CHECK(small.expert_params == 3.0 * 2560 * 1536);
  CHECK(small.max_nodes_per_token == 0);  // no node limit
  ModelSpec qwen = real_model("qwen32b");
  CHECK_FALSE(qwen.moe());
  CHECK(qwen.routed_params() == 0);
  CHECK(qwen.gemm_precision == "bf16");
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
  CHECK_FALSE(m->moe());  // no "moe" section: a dense model
  CHECK(m->moe_layers == 0);
  CHECK(m->routed_params() == 0);
  CHECK(m->gemm_precision == "fp8");
  CHECK(m->hbm_reserve_bytes == 4e9);
  CHECK(m->hbm_reserve_bytes == def.hbm_reserve_bytes);
}

TEST_CASE("ModelSpec: bad inputs -> errors naming the file and the JSON path", "[unit]") {
  ScratchDir dir;
  auto load = [&](const std::string& text) {
    return error_of(config::load_model(dir.write("m.json", text)));
  };
  std::string file = dir.path("m.json");

  // The old MFU section is gone: its values now live in the hardware file's kernels block.
  std::string e = load(minimal_json(R"(, "efficiency": {"prefill_mfu": 0.5})"));
  CHECK_THAT(e, Contains(file + ": efficiency: this section is gone") && Contains("kernels"));
  CHECK_THAT(load(minimal_json(R"(, "efficiency": {})")),
             Contains(file + ": efficiency: this section is gone"));
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

TEST_CASE("ModelSpec: sliding windows and the experts' precision -> checked, and used where they count",
          "[unit]") {
  ScratchDir dir;
  auto load = [&](const std::string& att, const std::string& extra = "") {
    return config::load_model(dir.write(
        "m.json", R"({"layers": 4, "params": {"active": 1e9, "total": 2e9)" + extra +
                      R"(}, "kv": {"bytes_per_token_layer": 100}, "attention": {"kind": "gqa", "heads": 4,
                      "qk_head_dim": 8, "v_head_dim": 8)" +
                      att + "}}"));
  };
  const std::string file = dir.path("m.json");
  CHECK_THAT(error_of(load(R"(, "sliding_window": 16)")),
             Contains(file + ": attention.sliding_layers: expected an integer >= 1 with the other"));
  CHECK_THAT(error_of(load(R"(, "sliding_layers": 2)")), Contains("attention.sliding_window: expected"));
  CHECK_THAT(error_of(load(R"(, "sliding_window": 16, "sliding_layers": 5)")),
             Contains("attention.sliding_layers: expected an integer <= layers (4), got 5"));
  CHECK_THAT(
      error_of(load("", R"(, "expert_weight_bytes_per_param": 0.5)")),
      Contains(file +
               ": params.expert_weight_bytes_per_param: expected 0 or absent for a model without moe"));
  // 2 of 4 layers slide over 16 tokens: one token over 100 cached attends (2 x 101 + 2 x 16) / 4 = 58.5
  // tokens on the average layer, 2 x 4 x 16 = 128 FLOPs each: 7,488.
  StatusOr<ModelSpec> m = load(R"(, "sliding_window": 16, "sliding_layers": 2)");
  REQUIRE(m);
  CHECK(attention_flops(*m, {100, 1}) == 7488);
}

TEST_CASE("ModelSpec: bad moe and compute sections -> errors naming the file and the JSON path", "[unit]") {
  ScratchDir dir;
  auto load = [&](const std::string& text) {
    return error_of(config::load_model(dir.write("m.json", text)));
  };
  const std::string file = dir.path("m.json");
  // minimal_json: 2 layers, params.active 1e9, params.total 2e9. A valid MoE section for it: 2 layers x 4
  // experts x 2e8 = 1.6e9 <= 2e9 total; 2 x 2 active x 2e8 = 8e8 <= 1e9 active.
  auto moe = [&](const std::string& fields) { return load(minimal_json(R"(, "moe": {)" + fields + "}")); };
  const std::string ok =
      R"("layers": 2, "routed_experts": 4, "active_experts": 2, "expert_params": 2e8, "hidden": 16)";
  CHECK(moe(ok) == "");
  // More active experts than there are.
  CHECK_THAT(
      moe(R"("layers": 2, "routed_experts": 4, "active_experts": 5, "expert_params": 1e8, "hidden": 16)"),
      Contains(file + ": moe.active_experts: expected an integer <= moe.routed_experts (4), got 5"));
  // More MoE layers than layers.
  CHECK_THAT(
      moe(R"("layers": 3, "routed_experts": 4, "active_experts": 2, "expert_params": 1e8, "hidden": 16)"),
      Contains(file + ": moe.layers: expected an integer <= layers (2), got 3"));
  // The section needs its layers.
  CHECK_THAT(moe(R"("routed_experts": 4, "active_experts": 2, "expert_params": 1e8, "hidden": 16)"),
             Contains(file + ": moe.layers: expected an integer in [1, 10000], got nothing"));
  // Experts heavier than the whole model: 2 x 4 x 3e8 = 2.4e9 > params.total 2e9.
  CHECK_THAT(
      moe(R"("layers": 2, "routed_experts": 4, "active_experts": 1, "expert_params": 3e8, "hidden": 16)"),
      Contains(file + ": moe.expert_params: expected moe.layers x moe.routed_experts x moe.expert_params "
                      "<= params.total (2e+09), got 2.4e+09"));
  // Active experts heavier than the active parameters: 2 x 3 x 2e8 = 1.2e9 > params.active 1e9.
  CHECK_THAT(
      moe(R"("layers": 2, "routed_experts": 4, "active_experts": 3, "expert_params": 2e8, "hidden": 16)"),
      Contains(file + ": moe.expert_params: expected moe.layers x moe.active_experts x moe.expert_params "
                      "<= params.active (1e+09), got 1.2e+09"));
  CHECK_THAT(
      moe(R"("layers": 2, "routed_experts": 4, "active_experts": 2, "expert_params": 0, "hidden": 16)"),
      Contains(file + ": moe.expert_params: expected a number > 0"));
  CHECK_THAT(
      moe(R"("layers": 2, "routed_experts": 4, "active_experts": 2, "expert_params": 2e8, "hidden": 0)"),
      Contains(file + ": moe.hidden: expected a number > 0"));
  CHECK_THAT(moe(ok + R"(, "experts": 4)"), Contains(file + ": moe.experts: unknown key"));
  CHECK_THAT(load(minimal_json(R"(, "compute": {"gemm_precision": "fp16"})")),
             Contains(file + ": compute.gemm_precision: expected one of fp8, bf16, got \"fp16\""));
  CHECK_THAT(load(minimal_json(R"(, "compute": {"hbm_reserve_bytes": -1})")),
             Contains(file + ": compute.hbm_reserve_bytes: expected a number >= 0"));
  CHECK_THAT(load(minimal_json(R"(, "compute": {"prefill_mfu": 0.5})")),
             Contains(file + ": compute.prefill_mfu: unknown key"));
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
  ModelSpec dense = toy_topk_model(0);
  // New tokens attend to 11, 12, 13 tokens.
  CHECK(attended_tokens(dense, {10, 3}) == 36);
  CHECK(attention_flops(dense, {10, 3}) == 20 * 36);
  CHECK(indexed_tokens(dense, {10, 3}) == 0);
  ModelSpec sparse = toy_topk_model(12);
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
  const EngineSpec e;
  ModelSpec qwen = real_model("qwen32b");
  double base = attention_time_s(qwen, hw, e, {{1000, 500}});
  CHECK(attention_time_s(qwen, hw, e, {{2000, 500}}) > base);
  CHECK(attention_time_s(qwen, hw, e, {{1000, 600}}) > base);
  CHECK(attention_time_s(qwen, hw, e, {{1000, 500}, {0, 10}}) > base);

  ModelSpec ds = real_model("ds660b");
  const double per_indexed = 2.0 * 64 * 128;
  // Past top-k only the indexer grows with the context: exactly bsz x delta x its per-token FLOPs.
  double grow = attention_flops(ds, {40000, 100}) - attention_flops(ds, {30000, 100});
  CHECK(grow == Approx(per_indexed * 100 * 10000).epsilon(1e-12));
  ModelSpec no_indexer = ds;
  no_indexer.indexer_heads = 0;
  CHECK(attention_flops(no_indexer, {40000, 100}) == attention_flops(no_indexer, {30000, 100}));
  CHECK(attention_flops(no_indexer, {1000, 100}) < attention_flops(no_indexer, {3000, 100}));
  CHECK(attention_time_s(ds, hw, e, {{40000, 100}}) > attention_time_s(ds, hw, e, {{30000, 100}}));
}

TEST_CASE("GPU rates: hopper-8x400g -> the kernels' fractions of the FP8 or BF16 peak and of HBM", "[unit]") {
  const Ds660bHopper d = ds660b_hopper();
  // A wrong fraction, a swapped kernel or a GEMM at the wrong precision changes one of these.
  const GpuRates r = gpu_rates(d.m, d.hw, d.e);
  CHECK(r.prefill_attention == Approx(kRpa).epsilon(1e-12));
  CHECK(r.decode_attention == Approx(kRda).epsilon(1e-12));
  CHECK(r.indexer == Approx(kRidx).epsilon(1e-12));
  CHECK(r.gemm == Approx(kRgemm).epsilon(1e-12));  // FP8 model
  CHECK(r.gemm_hbm == Approx(kRwb).epsilon(1e-12));
  CHECK(r.attention_hbm == Approx(kRkv).epsilon(1e-12));
  const ModelSpec qwen = real_model("qwen32b");  // BF16 model: 989e12 x 0.6468
  CHECK(gpu_rates(qwen, d.hw, d.e).gemm == Approx(kRgemmBf16).epsilon(1e-12));
  CHECK(gpu_rates(qwen, d.hw, d.e).prefill_attention == Approx(kRpa).epsilon(1e-12));  // attention: not BF16
  HardwareSpec no_bf16 = d.hw;
  no_bf16.gpu_bf16_flops = 0;  // 0 = half of gpu.flops: 1.979e15 / 2 x 0.6468 = 6.400086e14
  CHECK(gpu_rates(qwen, no_bf16, d.e).gemm == Approx(6.400086e14).epsilon(1e-12));
}

TEST_CASE("Layer time: a batch -> attention + dense + experts + fixed overhead, nothing to compute -> 0",
          "[unit]") {
  Ds660bHopper d = ds660b_hopper();
  // Chunks {30000, 400} and {0, 1000} on one GPU of an EP16 group, by hand:
  //   main attention {30000, 400}: every token attends 2048: 278,528 x 2048 x 400 = 228,170,137,600;
  //     {0, 1000}: all under top-k: 278,528 x 1000 x 1001 / 2 = 139,403,264,000; together 367,573,401,600
  //     FLOPs / 6.400086e14 = 0.5743257 ms
  //   indexer {30000, 400}: 16,384 x (30000 x 400 + 400 x 401 / 2) = 16,384 x 12,080,200 = 197,921,996,800;
  //     {0, 1000}: 16,384 x 500,500 = 8,200,192,000; together 206,122,188,800 FLOPs / 1.24677e14
  //     = 1.6532495 ms
  //   attention time = 2.2275752 ms
  //   dense: FLOPs 2 x 279,385,150.95 x 1400 = 782,278,422,662.3 / 1.2800172e15 = 0.6111468 ms, above the
  //     weight reads 294,576,610.62 / 2.66794e12 = 0.1104135 ms: compute-bound
  //   experts: 1400 x 8 = 11,200 pairs: 2 x 44,040,192 x 11,200 = 986,500,300,800 / 1.2800172e15
  //     = 0.7706930 ms, above 704,643,072 / 2.66794e12 = 0.2641150 ms; x 58/61 = 0.7327901 ms
  //   layer = 2.2275752 + 0.6111468 + 0.7327901 = 3.5715121 ms.
  // A model that drops the experts' 58/61, takes the weight reads as the bound, runs the indexer at the
  // main attention's rate (0.8964 ms of attention) or charges attention at the GEMM rate misses this.
  const std::vector<Chunk> cs{{30000, 400}, {0, 1000}};
  const double attention = 367573401600.0 / kRpa + 206122188800.0 / kRidx;
  const double dense = 2 * kDsDenseParams * 1400 / kRgemm;
  const double experts = 986500300800.0 / kRgemm * kMoeShare;
  CHECK(attention_time_s(d.m, d.hw, d.e, cs) == Approx(attention).epsilon(1e-12));
  CHECK(attention_time_s(d.m, d.hw, d.e, cs) == Approx(2.2275752e-3).epsilon(1e-7));
  CHECK(dense_time_s(d.m, d.hw, d.e, 1400, 16) == Approx(dense).epsilon(1e-12));
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 1400, 16) == Approx(experts).epsilon(1e-12));
  CHECK(linear_time_s(d.m, d.hw, d.e, 1400, 16) == Approx(dense + experts).epsilon(1e-12));
  CHECK(layer_time_s(d.m, d.hw, d.e, cs, 16) == Approx(3.5715121e-3).epsilon(1e-7));
  // The indexer at the prefill attention's rate (kernels.indexer 0.3234): 573,695,590,400 FLOPs
  // / 6.400086e14 = 0.8963873 ms of attention.
  EngineSpec fast_indexer = d.e;
  fast_indexer.k_indexer = 0.3234;
  CHECK(attention_time_s(d.m, d.hw, fast_indexer, cs) == Approx(573695590400.0 / kRpa).epsilon(1e-12));
  // The per-layer overhead is added once per layer.
  d.e.prefill_layer_overhead_s = 1e-3;
  CHECK(layer_time_s(d.m, d.hw, d.e, cs, 16) == Approx(4.5715121e-3).epsilon(1e-7));
  CHECK(layer_time_s(d.m, d.hw, d.e, {}, 16) == 0);
  CHECK(layer_time_s(d.m, d.hw, d.e, {{5000, 0}}, 16) == 0);
  CHECK(dense_time_s(d.m, d.hw, d.e, 0, 16) == 0);
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 0, 16) == 0);
}

TEST_CASE("Roofline: ds660b experts at EP16 -> memory-bound for few tokens, compute-bound for many",
          "[unit]") {
  const Ds660bHopper d = ds660b_hopper();
  // One GPU holds 256 / 16 = 16 experts per MoE layer; t tokens per GPU make 8t (token, expert) pairs.
  // Memory-bound: the bytes of the experts touched, min(16, 8t) x 44,040,192 B, at 2.66794e12 B/s.
  // Compute-bound: 2 x 44,040,192 x 8t FLOPs at 1.2800172e15 FLOP/s. Both x 58/61. The two meet at
  // 16 x 44,040,192 / 2.66794e12 = 2 x 44,040,192 x 8t / 1.2800172e15, t = 479.8 tokens.
  //   t = 1:    8 experts: 352,321,536 / 2.66794e12 = 132.0575 us (FLOPs: 0.55 us); x 58/61 = 125.5629 us
  //   t = 4:    32 pairs but only 16 experts: 704,643,072 / 2.66794e12 = 264.1150 us; x 58/61 = 251.1258 us
  //   t = 4096: 32,768 pairs: 2,886,218,022,912 FLOPs / 1.2800172e15 = 2,254.8275 us (weights: 264 us);
  //             x 58/61 = 2,143.9344 us.
  // Fails for a compute-only model (t = 1 would give 0.52 us), a memory-only one (t = 4096 would give
  // 251 us), and one that reads every pair's expert without the cap at the GPU's 16 (t = 4: 502 us).
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 1, 16) ==
        Approx(352321536.0 / kRwb * kMoeShare).epsilon(1e-12));
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 1, 16) == Approx(125.5629e-6).epsilon(1e-6));
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 4, 16) ==
        Approx(704643072.0 / kRwb * kMoeShare).epsilon(1e-12));
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 4, 16) == Approx(251.1258e-6).epsilon(1e-6));
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 4096, 16) ==
        Approx(2886218022912.0 / kRgemm * kMoeShare).epsilon(1e-12));
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 4096, 16) == Approx(2143.9344e-6).epsilon(1e-6));
  // Around the knee: 470 tokens still read the weights, 490 are past them.
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 470, 16) ==
        Approx(704643072.0 / kRwb * kMoeShare).epsilon(1e-12));
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 490, 16) ==
        Approx(2 * 44040192.0 * 8 * 490 / kRgemm * kMoeShare).epsilon(1e-12));
  // A dense model has no experts.
  CHECK(expert_time_s(real_model("qwen32b"), d.hw, d.e, Phase::kPrefill, 4096, 1) == 0);
}

TEST_CASE("Roofline: ds660b prefill per token -> falls with the batch as the weight reads are shared",
          "[unit]") {
  const Ds660bHopper d = ds660b_hopper();
  // linear_time_s(t, 16) / t, by hand:
  //   t = 64: dense 2 x 279,385,150.95 x 64 / 1.2800172e15 = 27.9 us < 294,576,610.62 / 2.66794e12
  //           = 110.4135 us (memory-bound); experts 512 pairs: 16 experts read, 264.1150 us x 58/61
  //           = 251.1258 us; total 361.5393 us = 5.649051 us per token.
  //   t = 4096: dense 2 x 279,385,150.95 x 4096 / 1.2800172e15 = 1,788.0409 us (compute-bound); experts
  //           2,143.9344 us (above); total 3,931.9753 us = 0.959955 us per token.
  // A model without the weight-read bound (FLOPs only) has the same per-token time at both sizes; one
  // without the FLOP bound gives 361.5 us / 4096 = 0.088 us per token at 4096, 11x less than here.
  const double per64 = (kDsDenseBytes16 / kRwb + 704643072.0 / kRwb * kMoeShare) / 64;
  const double per4096 = (2 * kDsDenseParams * 4096 / kRgemm + 2886218022912.0 / kRgemm * kMoeShare) / 4096;
  CHECK(dense_time_s(d.m, d.hw, d.e, 64, 16) == Approx(kDsDenseBytes16 / kRwb).epsilon(1e-12));
  CHECK(dense_time_s(d.m, d.hw, d.e, 4096, 16) == Approx(2 * kDsDenseParams * 4096 / kRgemm).epsilon(1e-12));
  CHECK(linear_time_s(d.m, d.hw, d.e, 64, 16) / 64 == Approx(per64).epsilon(1e-12));
  CHECK(linear_time_s(d.m, d.hw, d.e, 64, 16) / 64 == Approx(5.649051e-6).epsilon(1e-6));
  CHECK(linear_time_s(d.m, d.hw, d.e, 4096, 16) / 4096 == Approx(per4096).epsilon(1e-12));
  CHECK(linear_time_s(d.m, d.hw, d.e, 4096, 16) / 4096 == Approx(0.959955e-6).epsilon(1e-6));
  // More shards: each GPU reads fewer experts and as many dense weights (the replicated part stays):
  // at 32 shards and t = 1, 8 experts are still touched, the dense layer reads 294,576,610.62 B.
  CHECK(dense_time_s(d.m, d.hw, d.e, 1, 32) == Approx(kDsDenseBytes32 / kRwb).epsilon(1e-12));
  CHECK(expert_time_s(d.m, d.hw, d.e, Phase::kPrefill, 1, 32) ==
        Approx(352321536.0 / kRwb * kMoeShare).epsilon(1e-12));
}

TEST_CASE("Roofline: qwen32b's BF16 GEMMs -> 989e12 x 0.6468 when compute-bound, weight reads when not",
          "[unit]") {
  const HardwareSpec hw = hopper();
  const EngineSpec e = kernels();
  const ModelSpec qwen = real_model("qwen32b");
  REQUIRE(qwen.gemm_precision == "bf16");
  REQUIRE(qwen.active_params == 31.985e9);
  REQUIRE(qwen.total_params == 32.764e9);
  REQUIRE(qwen.layers == 64);
  // Dense model, no routed experts: per layer 31.985e9 / 64 = 499,765,625 params and
  // 32.764e9 x 2 B / 64 = 1,023,875,000 weight bytes.
  //   4096 tokens: 2 x 499,765,625 x 4096 = 4,094,080,000,000 FLOPs / (989e12 x 0.6468 = 6.396852e14)
  //                = 6.400148 ms (at the FP8 rate it would be half: 3.2 ms);
  //   1 token:     1,023,875,000 / 2.66794e12 = 383.7699 us (FLOPs: 1.6 us).
  CHECK(dense_time_s(qwen, hw, e, 4096, 1) == Approx(4094080000000.0 / kRgemmBf16).epsilon(1e-12));
  CHECK(dense_time_s(qwen, hw, e, 4096, 1) == Approx(6.400148e-3).epsilon(1e-6));
  CHECK(dense_time_s(qwen, hw, e, 1, 1) == Approx(1023875000.0 / kRwb).epsilon(1e-12));
  CHECK(dense_time_s(qwen, hw, e, 1, 1) == Approx(383.7699e-6).epsilon(1e-6));
  CHECK(linear_time_s(qwen, hw, e, 4096, 1) == dense_time_s(qwen, hw, e, 4096, 1));
  // The same model declared FP8 runs its GEMMs twice as fast.
  ModelSpec fp8 = qwen;
  fp8.gemm_precision = "fp8";
  CHECK(dense_time_s(fp8, hw, e, 4096, 1) == Approx(4094080000000.0 / kRgemm).epsilon(1e-12));
}

TEST_CASE("Decode step: qwen32b -> weight and KV reads for one request, GEMM FLOPs for thousands", "[unit]") {
  const HardwareSpec hw = hopper();
  EngineSpec e = kernels();  // decode.cpu_s = 0
  const ModelSpec qwen = real_model("qwen32b");
  CHECK(decode_step_time_s(qwen, hw, e, 0, 0, 1) == 0);
  // One request, 10,000 tokens of context, by hand:
  //   attention FLOPs 64 x 2 x 40 x 256 x 10,000 = 13,107,200,000 / 4.100488e14 = 32.0 us; KV bytes
  //   64 x 4096 x 10,000 = 2,621,440,000 / 2.999925e12 = 873.8352 us: memory-bound;
  //   dense GEMMs per layer: weight reads 383.7699 us (FLOPs 1.6 us), x 64 = 24.561272 ms;
  //   step = 0.8738352 + 24.561272 = 25.435107 ms.
  // A step without the weight reads would take 0.97 ms; one with the attention FLOP-bound 24.59 ms.
  CHECK(decode_step_flops(qwen, 1, 10000) == 13107200000.0);
  CHECK(decode_step_kv_bytes(qwen, 1, 10000) == 2621440000.0);
  const double t1 = decode_step_time_s(qwen, hw, e, 1, 10000, 1);
  CHECK(t1 == Approx(2621440000.0 / kRkv + 64 * 1023875000.0 / kRwb).epsilon(1e-12));
  CHECK(t1 == Approx(25.435107e-3).epsilon(1e-7));
  // Dense and memory-bound: each extra context token adds its 262,144 KV bytes at 2.999925e12 B/s.
  const double t2 = decode_step_time_s(qwen, hw, e, 1, 20000, 1);
  CHECK(t2 - t1 == Approx(10000 * 262144.0 / kRkv).epsilon(1e-9));
  // 4096 requests of 100 tokens: attention FLOPs 64 x 20,480 x 409,600 = 536,870,912,000 / 4.100488e14
  //   = 1.309285 ms, KV bytes 107,374,182,400 / 2.999925e12 = 35.792289 ms: memory-bound attention;
  //   GEMMs 2 x 499,765,625 x 4096 / 6.396852e14 = 6.400148 ms per layer (compute-bound), x 64
  //   = 409.609477 ms; step = 35.792289 + 409.609477 = 445.401766 ms.
  const double big = decode_step_time_s(qwen, hw, e, 4096, 4096.0 * 100, 1);
  CHECK(big == Approx(107374182400.0 / kRkv + 64 * 4094080000000.0 / kRgemmBf16).epsilon(1e-12));
  CHECK(big == Approx(445.401766e-3).epsilon(1e-7));
  CHECK(decode_step_time_s(qwen, hw, e, 8192, 8192.0 * 100, 1) > big);
  // The CPU time per step is added once per step: 60 ms.
  e.decode_cpu_s = 0.06;
  CHECK(decode_step_time_s(qwen, hw, e, 1, 10000, 1) == Approx(85.435107e-3).epsilon(1e-7));
}

TEST_CASE("Decode step: ds660b sparse attention -> main reads capped at top-k, indexer keys grow", "[unit]") {
  const Ds660bHopper d = ds660b_hopper();
  // One request, 10,000 tokens: main cache over the 2048 selected tokens, indexer keys over all 10,000:
  //   61 x (656 x 2048 + 132 x 10,000) = 61 x 2,663,488 = 162,472,768 B;
  //   FLOPs 61 x (278,528 x 2048 + 16,384 x 10,000) = 61 x 734,265,344 = 44,790,185,984.
  CHECK(decode_step_kv_bytes(d.m, 1, 10000) == 162472768.0);
  CHECK(decode_step_kv_bytes(d.m, 1, 20000) - decode_step_kv_bytes(d.m, 1, 10000) == 132.0 * 61 * 10000);
  CHECK(decode_step_flops(d.m, 1, 10000) == 44790185984.0);
  // 64 requests of 32,000 tokens at EP32, by hand:
  //   attended main tokens min(64 x 2048, 2,048,000) = 131,072;
  //   main FLOPs 61 x 278,528 x 131,072 = 2,226,940,542,976 at the decode attention rate 4.100488e14
  //   = 5.430916 ms; indexer FLOPs 61 x 16,384 x 2,048,000 = 2,046,820,352,000 at the indexer rate
  //   1.24677e14 = 16.416984 ms; together 21.847900 ms;
  //   KV bytes 61 x (656 x 131,072 + 132 x 2,048,000) = 21,735,473,152 / 2.999925e12 = 7.245339 ms:
  //   compute-bound attention, 21.847900 ms;
  //   dense per layer: 294,576,610.62 / 2.66794e12 = 110.4135 us (FLOPs: 27.9 us);
  //   experts per layer: 512 pairs, 256 / 32 = 8 experts held: 8 x 44,040,192 / 2.66794e12 = 132.0575 us
  //   (FLOPs 35.2 us), x 58/61 = 125.5629 us;
  //   step = 21.847900 + 61 x (110.4135 + 125.5629) us = 21.847900 + 14.394560 = 36.242460 ms.
  // All attention FLOPs at the decode attention rate would give 24.82 ms; a step without the GEMMs'
  // weight reads (FLOPs only) 25.60 ms.
  CHECK(decode_step_flops(d.m, 64, 64 * 32000.0) == 4273760894976.0);
  CHECK(decode_step_kv_bytes(d.m, 64, 64 * 32000.0) == 21735473152.0);
  const double step = decode_step_time_s(d.m, d.hw, d.e, 64, 64 * 32000.0, 32);
  CHECK(step == Approx(2226940542976.0 / kRda + 2046820352000.0 / kRidx +
                       61 * (kDsDenseBytes32 / kRwb + 352321536.0 / kRwb * kMoeShare))
                    .epsilon(1e-12));
  CHECK(step == Approx(36.242460e-3).epsilon(1e-7));
  CHECK(decode_step_time_s(d.m, d.hw, d.e, 64, 64 * 32000.0, 32) >
        decode_step_time_s(d.m, d.hw, d.e, 32, 32 * 32000.0, 32));
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

TEST_CASE("Cache-compute ratio: DeepSeek-V3 in MHA form -> 11.4, 13.6 and 15.0 GB/PFLOP at 16K, 32.7K, 64K",
          "[unit]") {
  // By hand, 429 appended tokens over c cached: per layer, (429c + 429 x 430 / 2) pairs x 2 x 128 x
  // (192 + 128) + 2 x 16,777,216 x c (the cached latents expanded) + 2 x 36,625,618,432 / 61 x 429 linear; KV
  // 1152 B per token and layer. Counted absorbed (278,528 per pair, no expansion) the ratios would be 7.5
  // to 9.0.
  const ModelSpec v3 = real_model("dsv3");
  for (double c : {16384.0, 32721.0, 65536.0}) {
    INFO("context " << c);
    const double flops =
        61 * ((429 * c + 429.0 * 430 / 2) * 81920 + 2 * 16777216.0 * c + 2 * 36625618432.0 / 61 * 429);
    CHECK(cache_compute_ratio_gb_per_pflop(v3, c, 429) ==
          Approx(c * 1152 * 61 / 1e9 / (flops / 1e15)).epsilon(1e-12));
  }
  CHECK(cache_compute_ratio_gb_per_pflop(v3, 32721, 429) == Approx(13.605).epsilon(1e-4));
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
