// `dpsim model import`'s arithmetic per architecture family (sim/hf/), against hand computations on small
// configs whose every count can be done on paper: parameters (total, active, replicated), KV bytes per
// token, attention FLOPs per token at a given context (through the cost model, so the imported fields are
// checked where they are used), and the deployment units.
#include <catch2/catch.hpp>
#include <string>

#include "sim/cost/compute_model.h"
#include "sim/hf/import.h"
#include "tests/unit/paper_files.h"

namespace sim::hf {
namespace {

config::HardwareSpec hopper() {
  return testing::real_hardware("hopper-8x400g");
}

Imported import_text(const std::string& text, const std::string& kv, const std::string& weights = "") {
  ImportSpec spec;
  spec.precision.kv = kv;
  spec.precision.weights = weights;
  StatusOr<Imported> m = import_config_text(text, "tiny/config.json", spec, hopper(), "hopper-8x400g");
  INFO((m ? std::string("ok") : m.status().message()));
  REQUIRE(m);
  return *m;
}

// Llama-like: hidden 64, 2 layers, 4 heads of 16, 2 KV heads, MLP 128, vocabulary 100, untied.
const char* kTinyLlama = R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100,
  "max_position_embeddings": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";

TEST_CASE("Import, dense GQA: a tiny Llama -> parameters, KV bytes and attention FLOPs by hand", "[unit]") {
  const Imported imp = import_text(kTinyLlama, "bf16");
  const config::ModelSpec& m = imp.model;
  // Per layer: q 64 x 64 = 4,096; k and v 64 x (2 x 16) = 2,048 each; o 4,096; MLP 3 x 64 x 128 = 24,576;
  // norms 2 x 64 = 128: 36,992. Two layers 73,984; embedding 100 x 64 = 6,400 and an untied lm head 6,400;
  // final norm 64. Total 86,848; active (no input lookup) 80,448.
  CHECK(m.total_params == 86848);
  CHECK(m.active_params == 80448);
  CHECK(m.layers == 2);
  CHECK(m.max_context == 4096);
  CHECK(m.attention == "gqa");
  CHECK(m.heads == 4);
  CHECK(m.qk_head_dim == 16);
  CHECK(m.v_head_dim == 16);
  CHECK_FALSE(m.moe());
  // KV in BF16: K and V of 2 heads x 16 dims x 2 B = 128 B per token and layer, 256 per token.
  CHECK(m.main_kv_bytes_per_token_layer == 128);
  CHECK(cost::kv_bytes_per_token(m) == 256);
  // One new token over 1,000 cached: it attends 1,001 tokens, 2 x 4 heads x (16 + 16) = 256 FLOPs each.
  CHECK(cost::attention_flops(m, {1000, 1}) == 256256);
  // The whole model fits one GPU: units of one GPU, every weight held by it.
  CHECK(m.weight_shards == 1);
  CHECK(m.prefill_ep_gpus == 1);
  CHECK(m.decode_ep_gpus == 1);
  CHECK(m.replicated_params == m.total_params);
  CHECK(m.weight_bytes_per_param == 2);
  CHECK(m.gemm_precision == "bf16");
  // FP8 KV halves the bytes; tied embeddings drop the lm head from the total and count the matrix as active.
  CHECK(import_text(kTinyLlama, "fp8").model.main_kv_bytes_per_token_layer == 64);
  std::string tied = kTinyLlama;
  tied.replace(tied.find("false"), 5, "true");
  const config::ModelSpec t = import_text(tied, "bf16").model;
  CHECK(t.total_params == 86848 - 6400);
  CHECK(t.active_params == 86848 - 6400);
}

// gpt-oss-like: hidden 32, 4 layers alternating sliding (window 16) and full, 4 heads of 8 over 1 KV head,
// biases everywhere and a sink per head; 4 experts of 16 with biases, 2 per token; vocabulary 50; MXFP4.
const char* kTinyGptOss = R"({"model_type": "gpt_oss", "num_hidden_layers": 4, "hidden_size": 32,
  "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 16,
  "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 50, "attention_bias": true,
  "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
  "sliding_window": 16, "max_position_embeddings": 1024, "tie_word_embeddings": false,
  "quantization_config": {"quant_method": "mxfp4"}})";

TEST_CASE("Import, MoE GQA: a tiny gpt-oss -> experts, sliding windows and MXFP4 by hand", "[unit]") {
  const Imported imp = import_text(kTinyGptOss, "bf16", "bf16");
  const config::ModelSpec& m = imp.model;
  // Attention per layer: q 32 x 32 + 32 = 1,056; k and v 32 x 8 + 8 = 264 each; o 32 x 32 + 32 = 1,056;
  // sinks 4: 2,644. Norms 64. Router 32 x 4 + 4 = 132. One expert: 3 x 32 x 16 + 2 x 16 + 32 = 1,600.
  // Routed 4 layers x 4 x 1,600 = 25,600; the rest 4 x (2,644 + 64) + 4 x 132 + 2 x 50 x 32 + 32 = 14,592.
  CHECK(m.total_params == 40192);
  // Active: total - the 2 unused experts per layer (4 x 2 x 1,600) - the input lookup 1,600 = 25,792.
  CHECK(m.active_params == 25792);
  CHECK(m.moe_layers == 4);
  CHECK(m.routed_experts == 4);
  CHECK(m.active_experts == 2);
  CHECK(m.expert_params == 1600);
  CHECK(m.hidden == 32);
  CHECK(m.sliding_window == 16);
  CHECK(m.sliding_layers == 2);
  // KV: 2 x 1 head x 8 x 2 B = 32 B per token and layer, every layer counted.
  CHECK(m.main_kv_bytes_per_token_layer == 32);
  CHECK(cost::kv_bytes_per_token(m) == 128);
  // One token over 100 cached: the full layers attend 101, the sliding ones 16: the average layer (2 x 101 +
  // 2 x 16) / 4 = 58.5 tokens x 2 x 4 x (8 + 8) = 7,488 FLOPs (without the window: 12,928).
  CHECK(cost::attention_flops(m, {100, 1}) == 7488);
  // Within the window nothing changes: 1 token over 10 cached attends 11 tokens in every layer.
  CHECK(cost::attention_flops(m, {10, 1}) == 11 * 128);
  // Decode: 3 requests of 100 tokens each read 300 on the full layers and min(3 x 16, 300) = 48 on the
  // sliding ones: 2 x 4 x 16 x (2 x 300 + 2 x 48) = 89,088 FLOPs per query over the 4 layers.
  CHECK(cost::decode_step_flops(m, 3, 300) == 89088);
  // Weights: MXFP4 experts at 0.53125 B, the rest at BF16: 14,592 x 2 + 25,600 x 0.53125 = 42,784 B on one
  // GPU.
  CHECK(m.weight_bytes_per_param == 2);
  CHECK(m.expert_weight_bytes_per_param == 0.53125);
  CHECK(m.weight_bytes_per_gpu(1) == 42784);
  CHECK(m.gemm_precision == "bf16");
  CHECK(m.replicated_params == m.total_params);  // one GPU per unit
}

TEST_CASE(
    "Import, Mistral and Mixtral: a window on every layer, and Mixtral's public config -> 46.7B and 12.7B",
    "[unit]") {
  // Mistral: sliding_window on every layer. Tiny: 2 layers of 4 heads of 16, window 8: one token over 100
  // cached attends min(8, 101) = 8 tokens in both layers: 8 x 2 x 4 x 32 = 2,048 FLOPs.
  std::string mistral = kTinyLlama;
  mistral.replace(mistral.find("llama"), 5, "mistral");
  mistral.replace(mistral.find("\"torch_dtype\""), 0, "\"sliding_window\": 8, ");
  const config::ModelSpec m = import_text(mistral, "bf16").model;
  CHECK(m.sliding_window == 8);
  CHECK(m.sliding_layers == 2);
  CHECK(cost::attention_flops(m, {100, 1}) == 2048);
  CHECK(m.total_params == 86848);  // Mistral's projections are Llama's
  // Mixtral-8x7B's config (models/llm/hf/): per layer attention 4,096 x 4,096 x 2 + 4,096 x 1,024 x 2 =
  // 41,943,040, norms 8,192, router 4,096 x 8 = 32,768, 8 experts of 3 x 4,096 x 14,336 = 176,160,768; x 32
  // layers = 46,440,644,608; embedding and lm head 32,000 x 4,096 each, final norm 4,096: 46,702,792,704.
  // Active: less 32 x 6 unused experts (33,822,867,456) and the lookup (131,072,000) = 12,748,853,248
  // (Mistral's 12.9B counts the lookup).
  ImportSpec spec;
  spec.config = "models/llm/hf/mixtral-8x7b.json";
  spec.precision.kv = "bf16";
  StatusOr<Imported> mix = import_config(spec);
  REQUIRE(mix);
  CHECK(mix->model.total_params == 46702792704);
  CHECK(mix->model.active_params == 12748853248);
  CHECK_FALSE(mix->model.sliding());  // sliding_window null
  CHECK(mix->model.main_kv_bytes_per_token_layer == 2 * 8 * 128 * 2);
}

// DeepSeek-V3-like: hidden 64, 3 layers (the first dense), 2 heads; q through a rank-16 latent; KV latent 8 +
// RoPE 2; nope 4, v 4; dense MLP 32; 4 routed experts of 8 (2 per token) + 1 shared; 2 groups, 1 per token;
// noaux_tc router bias; vocabulary 10; FP8 weights.
const char* kTinyV3 = R"({"model_type": "deepseek_v3", "num_hidden_layers": 3, "hidden_size": 64,
  "num_attention_heads": 2, "q_lora_rank": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 4, "qk_rope_head_dim": 2,
  "v_head_dim": 4, "intermediate_size": 32, "moe_intermediate_size": 8, "n_routed_experts": 4,
  "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1, "moe_layer_freq": 1,
  "n_group": 2, "topk_group": 1, "topk_method": "noaux_tc", "vocab_size": 10, "max_position_embeddings": 2048,
  "tie_word_embeddings": false, "num_nextn_predict_layers": 1,
  "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}})";

TEST_CASE("Import, MLA with MoE: a tiny DeepSeek-V3 -> parameters, KV layouts and both prefill forms by hand",
          "[unit]") {
  const Imported imp = import_text(kTinyV3, "bf16");
  const config::ModelSpec& m = imp.model;
  // Attention per layer: q 64 x 16 + 16 (norm) + 16 x 2 x 6 = 1,232; kv_a 64 x 10 + 8 (norm) = 648; kv_b
  // 8 x 2 x (4 + 4) = 128; o 2 x 4 x 64 = 512: 2,520, + norms 128 = 2,648, x 3 = 7,944. Dense MLP 3 x 64 x 32
  // = 6,144. Two MoE layers: routed 4 x 1,536 = 6,144 each, shared 1,536, router 64 x 4 + 4 = 260. Embedding
  // 640 and lm head 640, final norm 64. Total 7,944 + 6,144 + 2 x (6,144 + 1,796) + 1,280 + 64 = 31,312.
  CHECK(m.total_params == 31312);
  // Active: 31,312 - 2 x 2 unused x 1,536 - 640 = 24,528. Replicated: all but the routed 12,288 = 19,024.
  CHECK(m.active_params == 24528);
  CHECK(m.moe_layers == 2);
  CHECK(m.expert_params == 1536);
  CHECK(m.expert_groups == 2);
  CHECK(m.max_nodes_per_token == 1);
  CHECK(m.attention == "mla");
  CHECK(m.qk_head_dim == 10);
  CHECK(m.v_head_dim == 8);
  CHECK(m.prefill_mha);
  CHECK(m.prefill_qk_head_dim == 6);
  CHECK(m.prefill_v_head_dim == 4);
  CHECK(m.kv_up_params == 128);
  CHECK(m.weight_bytes_per_param == 1);
  CHECK(m.gemm_precision == "fp8");
  // KV: BF16 (8 + 2) x 2 = 20 B; FP8 (FlashMLA) 8 + one 4-B scale + 2 x 2 = 16 B per token and layer.
  CHECK(m.main_kv_bytes_per_token_layer == 20);
  CHECK(import_text(kTinyV3, "fp8").model.main_kv_bytes_per_token_layer == 16);
  // 200 new tokens over 100 cached: 200 x 100 + 200 x 201 / 2 = 40,100 pairs. Absorbed 2 x 2 x (10 + 8) x
  // 40,100 = 2,887,200; MHA 2 x 2 x (6 + 4) x 40,100 + 2 x 128 x 100 = 1,629,600: the MHA form.
  CHECK(cost::attention_flops(m, {100, 200}) == 1629600);
  // One new token over 1,000 cached: absorbed 72 x 1,001 = 72,072 < MHA 40 x 1,001 + 256,000: absorbed.
  CHECK(cost::attention_flops(m, {1000, 1}) == 72072);
  // The model fits one GPU.
  CHECK(m.weight_shards == 1);
}

TEST_CASE("Import, MLA with DSA: a tiny DeepSeek-V3.2 -> the indexer's parameters, keys and FLOPs by hand",
          "[unit]") {
  std::string v32 = kTinyV3;
  v32.replace(v32.find("deepseek_v3"), 11, "deepseek_v32");
  v32.replace(v32.find("\"vocab_size\""), 0,
              "\"index_n_heads\": 2, \"index_head_dim\": 16, \"index_topk\": 50, ");
  const config::ModelSpec m = import_text(v32, "fp8").model;
  // Indexer per layer: wq_b 16 x 2 x 16 = 512, wk 64 x 16 = 1,024, k norm 2 x 16 = 32, weights 64 x 2 = 128:
  // 1,696, x 3 = 5,088 more than V3: total 36,400, active 29,616.
  CHECK(m.total_params == 36400);
  CHECK(m.active_params == 29616);
  CHECK(m.sparse_topk == 50);
  CHECK(m.indexer_heads == 2);
  CHECK(m.indexer_head_dim == 16);
  CHECK_FALSE(m.prefill_mha);  // DSA runs absorbed
  // Keys: 16 FP8 + one FP32 scale = 20 B; with the main FP8 cache 16 + 20 = 36 B per token and layer.
  CHECK(m.indexer_kv_bytes_per_token_layer == 20);
  CHECK(cost::kv_bytes_per_token_layer(m) == 36);
  // One token over 100 cached: main attention over min(50, 101) = 50 tokens x 72 = 3,600; indexer over 101
  // tokens x 2 x 2 x 16 = 6,464: 10,064 FLOPs.
  CHECK(cost::attention_flops(m, {100, 1}) == 10064);
}

TEST_CASE("Import, units: the smallest group that holds the weights with room for the longest context",
          "[unit]") {
  // 70B-class dense model in BF16 (hidden 8192, 80 layers, 64 heads over 8, MLP 28672, vocabulary 128,256):
  // 70,553,706,496 parameters, 141.1 GB; KV 2 x 8 x 128 x 2 x 80 = 327,680 B per token; 131,072 tokens need
  // 42.95 GB per GPU. On 80 GB GPUs with the 4 GB reserve: 4 GPUs leave 80 - 35.28 - 4 = 40.72 GB (too few),
  // 8 leave 58.36 GB.
  const std::string llama70 = R"({"model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192,
    "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 28672, "vocab_size": 128256,
    "max_position_embeddings": 131072, "torch_dtype": "bfloat16"})";
  const Imported imp = import_text(llama70, "bf16");
  CHECK(imp.model.total_params == 70553706496);
  CHECK(imp.prefill_ep == 8);
  CHECK(imp.decode_ep == 8);
  CHECK(imp.model.weight_shards == 8);
  CHECK(imp.model.replicated_params == 0);  // tensor parallel: every weight shards
  // With room for 65,536 tokens (21.47 GB) 4 GPUs do.
  ImportSpec spec;
  spec.precision.kv = "bf16";
  spec.kv_room_tokens = 65536;
  StatusOr<Imported> room = import_config_text(llama70, "c.json", spec, hopper(), "hopper-8x400g");
  REQUIRE(room);
  CHECK(room->prefill_ep == 4);
  // Units given by flag are kept; one that is not a divisor or multiple of the node's 8 GPUs is refused.
  spec.prefill_ep = 16;
  spec.decode_ep = 3;
  StatusOr<Imported> bad = import_config_text(llama70, "c.json", spec, hopper(), "hopper-8x400g");
  REQUIRE_FALSE(bad);
  CHECK(
      bad.status().message() ==
      "c.json: --decode-ep: expected a divisor or a multiple of the 8 GPUs per node of hopper-8x400g, got 3");
}

}  // namespace
}  // namespace sim::hf
