// Closed-form cost models of one LLM on one GPU (pure; no SimGrid). Formulas are documented in
// models/llm/README.md; the numbers come from models/llm/*.json (ModelSpec).
// Units: tokens, FLOPs, bytes, seconds.
#pragma once

#include <vector>

#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"

namespace sim::cost {

// One request's share of a prefill forward batch: `cached` tokens whose KV already exists (storage hit
// or an earlier chunk) and `bsz` new tokens computed now (DualPath §6.2).
struct Chunk {
  double cached = 0;
  double bsz = 0;
};

// KV bytes of one token in one layer (everything that is stored, loaded and transferred).
double kv_bytes_per_token_layer(const config::ModelSpec& m);
// KV bytes of one token over all layers.
double kv_bytes_per_token(const config::ModelSpec& m);

// FLOPs of the attention part of ONE layer for one chunk (includes a sparse-attention indexer).
double attention_flops(const config::ModelSpec& m, const Chunk& c);
// FLOPs of the non-attention part (projections, FFN/MoE) of ONE layer for `tokens` new tokens.
double linear_flops(const config::ModelSpec& m, double tokens);
// FLOPs of a whole prefill of a chunk over all layers.
double prefill_flops(const config::ModelSpec& m, const Chunk& c);

// Predicted time of ONE layer's attention on one GPU for a set of chunks (the compute-quota predictor).
double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const std::vector<Chunk>& cs);
// Time of ONE full layer (attention + linear) on one GPU for a set of chunks.
double layer_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const std::vector<Chunk>& cs);

// Time of one decode step on one GPU: `batch` requests whose contexts add up to `total_context` tokens.
// max(compute, HBM traffic of weights + KV) + per-step overhead.
double decode_step_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                          double total_context);

// HBM bytes left for KV on one GPU once the weights (and the runtime reserve) are placed.
double hbm_kv_bytes_per_gpu(const config::ModelSpec& m, const config::HardwareSpec& hw);

// Cache-compute ratio in GB/PFLOP (DualPath §3, Table 1): KV bytes of `context` tokens over the FLOPs of
// prefilling `append` tokens on top of them.
double cache_compute_ratio_gb_per_pflop(const config::ModelSpec& m, double context, double append);

}  // namespace sim::cost
