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

  // Parameters.
  double active_params = 0;           // multiplied per token: linear FLOPs/token = 2 x this (over all layers)
  double total_params = 0;            // held in HBM (with sharding below)
  double replicated_params = 0;       // part of total_params every GPU holds whole (DP attention,
                                      // dense layers, shared experts, embeddings); 0 = all sharded
  double weight_bytes_per_param = 2;  // BF16 = 2, FP8 = 1
  int weight_shards = 1;              // GPUs the sharded part is spread over (EP/TP degree)

  // KV cache, bytes per token per layer.
  double main_kv_bytes_per_token_layer = 0;     // attention cache (MLA latent + rope, or GQA K and V)
  double indexer_kv_bytes_per_token_layer = 0;  // sparse-attention indexer keys (0 = none)
  bool indexer_keys_in_cache = true;  // the indexer keys are stored, loaded and transferred with the KV

  // Attention shape for FLOP counts (per query head and attended token: 2 x (qk + v) FLOPs).
  std::string attention = "gqa";  // mla | gqa
  int heads = 1;                  // query heads
  double qk_head_dim = 128;       // dims of the score product (absorbed MLA: latent + rope)
  double v_head_dim = 128;        // dims of the value product (absorbed MLA: the latent)
  int sparse_topk = 0;            // 0 = dense attention; else tokens each query attends to (DSA)
  int indexer_heads = 0;          // DSA indexer: dense over the context
  double indexer_head_dim = 0;

  // Efficiencies mapping FLOPs and bytes to time. Calibration defaults, not from the paper.
  double peak_flops_factor = 1.0;         // multiplies HardwareSpec::gpu_flops (an FP8 peak) for this
                                          // model's GEMM precision: 0.5 for BF16 on Hopper
  double prefill_mfu = 0.45;              // linear layers of prefill, fraction of the (scaled) peak
  double attention_mfu = 0.4;             // attention kernels (prefill; includes the indexer)
  double decode_mfu = 0.25;               // decode compute (linear + attention)
  double decode_hbm_efficiency = 0.7;     // fraction of HBM bandwidth reached by decode
  double decode_step_overhead_s = 0.005;  // per decode step (scheduling, collectives, launches)
  double prefill_layer_overhead_s = 0;    // per layer per forward batch
  double hbm_reserve_bytes = 4e9;         // activations, workspace, runtime kept free per GPU

  bool sparse() const { return sparse_topk > 0; }
  // Weight bytes held by one GPU with `shards` GPUs sharing the sharded part.
  double weight_bytes_per_gpu(int shards) const {
    return (replicated_params + (total_params - replicated_params) / shards) * weight_bytes_per_param;
  }
  double weight_bytes_per_gpu() const { return weight_bytes_per_gpu(weight_shards); }
};

// Loads and validates a model file (strict: unknown keys are errors). Required: layers, params.active,
// params.total, kv.bytes_per_token_layer, attention.{kind, heads, qk_head_dim, v_head_dim}; every other
// key has the default above. Errors name the file and the JSON path.
StatusOr<ModelSpec> load_model(const std::string& path);
// The same from the text of a model file; `name` stands for the file in messages and its stem is the
// default name. Reads no file.
StatusOr<ModelSpec> parse_model(const std::string& text, const std::string& name);

}  // namespace sim::config
