// ModelSpec: one LLM, loaded from models/llm/*.json. Numbers only; the formulas that use them are in
// sim/cost/compute_model.h and models/llm/README.md. Every value in the JSON carries its source (paper,
// public config, derived, or calibration default) in the file's "sources" object.
// Units: tokens, parameters, bytes, seconds. Efficiencies are fractions of a peak.
#pragma once

#include <map>
#include <string>

#include "sim/core/status.h"

namespace sim::config {

struct ModelSpec {
  std::string name;
  std::string file;                            // where it was loaded from
  std::map<std::string, std::string> sources;  // JSON path -> where the value comes from (documentation)

  int layers = 1;
  int max_context = 131072;  // tokens
  // Multi-token prediction (draft) modules the checkpoint ships (DeepSeek-V3's num_nextn_predict_layers).
  // 0 = none: an engine's decode.mtp cannot run on it, and the model decodes one token per step.
  int mtp_modules = 0;

  // Parameters.
  double active_params = 0;           // multiplied per token: linear FLOPs/token = 2 x this (over all layers)
  double total_params = 0;            // held in HBM (with sharding below)
  double replicated_params = 0;       // part of total_params every GPU holds whole (DP attention,
                                      // dense layers, shared experts, embeddings); 0 = all sharded
  double weight_bytes_per_param = 2;  // BF16 = 2, FP8 = 1
  // Bytes per parameter of the routed experts (MoE only), when the checkpoint stores them in another
  // precision than the rest (gpt-oss: MXFP4 experts, 4.25 bits = 0.53125 B, beside BF16 attention). 0 =
  // weight_bytes_per_param.
  double expert_weight_bytes_per_param = 0;
  int weight_shards = 1;  // GPUs the sharded part is spread over (EP/TP degree)
  // Deployment units (DESIGN.md, "Deployment units"): the GPUs of one prefill and one decode EP group, the
  // default of cluster.prefill_ep_gpus / decode_ep_gpus. 0 = one unit spanning the role. A model with
  // weight_shards = 1 holds its whole weights on every GPU: its unit is one GPU (1).
  int prefill_ep_gpus = 0;
  int decode_ep_gpus = 0;

  // KV cache, bytes per token per layer.
  double main_kv_bytes_per_token_layer = 0;     // attention cache (MLA latent + rope, or GQA K and V)
  double indexer_kv_bytes_per_token_layer = 0;  // sparse-attention indexer keys (0 = none)
  bool indexer_keys_in_cache = true;  // the indexer keys are stored, loaded and transferred with the KV

  // Attention shape for FLOP counts (per query head and attended token: 2 x (qk + v) FLOPs).
  std::string attention = "gqa";  // mla | gqa
  int heads = 1;                  // query heads
  double qk_head_dim = 128;       // dims of the score product (absorbed MLA: latent + rope)
  double v_head_dim = 128;        // dims of the value product (absorbed MLA: the latent)
  // The form of the prefill's attention (models/llm/README.md, "Compute"): MQA (absorbed MLA: the dims
  // above) or MHA (GQA's own dims; MLA un-absorbed: the heads' own key and value dims, after each cached
  // token's latent is expanded by kv_up_params per layer). Decode always runs the dims above.
  bool prefill_mha = false;
  double prefill_qk_head_dim = 0;  // MHA form: dims of the score product per head
  double prefill_v_head_dim = 0;   // MHA form: dims of the value product per head
  double kv_up_params = 0;         // MLA in MHA form: per layer, the weights expanding a latent into K and V
  int sparse_topk = 0;             // 0 = dense attention; else tokens each query attends to (DSA)
  // Sliding-window attention: `sliding_layers` of the layers attend only to the last `sliding_window`
  // tokens (Mistral, gpt-oss); 0 = none. Their FLOPs and decode KV reads count the window; the KV they
  // store and move is counted in full (models/llm/README.md).
  int sliding_window = 0;
  int sliding_layers = 0;
  int indexer_heads = 0;  // DSA indexer: dense over the context
  double indexer_head_dim = 0;

  // Mixture of experts (absent for dense models: moe_layers = 0). The routed experts are sharded over the
  // role's GPUs (expert parallelism, EP); every token goes to active_experts of them, in at most
  // max_nodes_per_token nodes (node-limited routing). Dispatch and combine move `hidden` values per
  // token and destination, at their bytes per value.
  int moe_layers = 0;
  int routed_experts = 0;
  int active_experts = 0;
  double expert_params = 0;  // per expert per MoE layer (gate, up and down projections)
  // The shared experts' parameters in one MoE layer, part of the dense parameters every GPU runs on its own
  // tokens: with two micro-batches a prefill runs them beside the exchange (cost/micro_batch_schedule.h).
  double shared_params = 0;
  double hidden = 0;
  int max_nodes_per_token = 0;  // 0 = no limit
  // Group-limited routing: the routed experts fall into this many groups and a token's experts lie in
  // max_nodes_per_token of them (DeepSeek-V3: 8 groups, top 4); 0 = not given (a token then hits
  // min(max_nodes_per_token, nodes, active_experts) nodes).
  int expert_groups = 0;
  double dispatch_bytes_per_value = 1;
  double combine_bytes_per_value = 2;

  // Compute (models/llm/README.md, "Compute"): the kernels' rates are the engine file's fractions of the
  // node file's peaks.
  std::string gemm_precision = "fp8";  // fp8 | bf16: which peak of the node file the GEMMs use
  double hbm_reserve_bytes = 4e9;      // activations, workspace, runtime kept free per GPU

  bool sparse() const { return sparse_topk > 0; }
  bool sliding() const { return sliding_layers > 0; }
  double expert_bytes_per_param() const {
    return expert_weight_bytes_per_param > 0 ? expert_weight_bytes_per_param : weight_bytes_per_param;
  }
  // Weight bytes held by one GPU with `shards` GPUs sharing the sharded part: every parameter at
  // weight_bytes_per_param but the routed experts, at expert_bytes_per_param().
  double weight_bytes_per_gpu(int shards) const {
    return (replicated_params + (total_params - replicated_params) / shards) * weight_bytes_per_param +
           routed_params() / shards * (expert_bytes_per_param() - weight_bytes_per_param);
  }
  double weight_bytes_per_gpu() const { return weight_bytes_per_gpu(weight_shards); }
  bool moe() const { return moe_layers > 0; }
  // Routed expert parameters over all MoE layers (part of total_params, sharded).
  double routed_params() const { return static_cast<double>(moe_layers) * routed_experts * expert_params; }
  // Routed expert parameters a token multiplies (part of active_params).
  double routed_active_params() const {
    return static_cast<double>(moe_layers) * active_experts * expert_params;
  }
};

// Loads and validates a model file (strict: unknown keys are errors). Required: layers, params.active,
// params.total, kv.bytes_per_token_layer, attention.{kind, heads, qk_head_dim, v_head_dim}; every other
// key has the default above. Errors name the file and the JSON path.
StatusOr<ModelSpec> load_model(const std::string& path);
// The same from the text of a model file; `name` stands for the file in messages and its stem is the
// default name. Reads no file.
StatusOr<ModelSpec> parse_model(const std::string& text, const std::string& name);

}  // namespace sim::config
