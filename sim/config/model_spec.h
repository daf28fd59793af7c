// ModelSpec: one LLM, loaded from models/llm/*.json. Numbers only; the formulas that use them are in
// sim/cost/compute_model.h. Every value in the JSON carries its source (paper, public config, calibration).
#pragma once

#include <string>

#include "sim/core/status.h"

namespace sim::config {

struct ModelSpec {
  std::string name;
  std::string file;

  int layers = 61;
  int max_context = 131072;                  // tokens
  double active_params = 37e9;               // parameters touched per token (linear FLOPs = 2x this)
  double total_params = 671e9;               // for the weights' HBM footprint
  double weight_bytes_per_param = 1.0;       // FP8 weights = 1
  int weight_shards = 8;                     // GPUs the weights are spread over (EP/TP degree)

  // KV cache, bytes per token per layer.
  double kv_bytes_per_token_layer = 656;     // main cache (MLA latent + rope, FP8 layout)
  double indexer_kv_bytes_per_token_layer = 0;  // sparse-attention indexer keys (0 = none)

  // Attention shape for FLOP counts.
  std::string attention = "mla";             // mla | gqa
  int heads = 128;
  double qk_head_dim = 192;                  // dims entering the score product (nope + rope for MLA)
  double v_head_dim = 128;                   // dims of the value product (the latent for absorbed MLA)
  int sparse_topk = 0;                       // 0 = dense attention; else tokens each query attends to
  int indexer_heads = 0;
  double indexer_head_dim = 0;

  // Efficiencies mapping FLOPs and bytes to time (calibrated; see the JSON's notes).
  double prefill_mfu = 0.5;                  // fraction of peak FLOP/s reached by prefill linear layers
  double attention_mfu = 0.5;                // fraction of peak reached by attention kernels
  double decode_mfu = 0.3;
  double decode_hbm_efficiency = 0.7;        // fraction of HBM bandwidth reached by decode
  double decode_step_overhead_s = 0.005;     // per decode step (scheduling, collectives, launch)
  double prefill_layer_overhead_s = 0.0;     // per layer per forward batch
  double hbm_reserve_bytes = 4e9;            // activations/workspace kept free per GPU
};

// Loads and validates a model file. Errors name the file and the JSON path.
StatusOr<ModelSpec> load_model(const std::string& path);

}  // namespace sim::config
