// Closed-form cost models of one LLM on one GPU (pure; no SimGrid). The formulas, their simplifications
// and their sources are documented in models/llm/README.md; the numbers come from models/llm/*.json.
// Units: tokens, FLOPs, bytes, seconds. FLOP/s = HardwareSpec::gpu_flops x ModelSpec::peak_flops_factor.
// REQUIRES for every function: non-negative token counts.
#pragma once

#include <vector>

#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"

namespace sim::cost {

// One request's share of a prefill forward batch: `cached` tokens whose KV already exists (storage hit
// or an earlier chunk) and `bsz` new tokens computed now (DualPath §6.2, PAPER.md §5.5).
struct Chunk {
  double cached = 0;
  double bsz = 0;
};

// ---- KV bytes ----
// KV bytes of one token in one layer that are stored, loaded and transferred: the main cache plus the
// indexer keys when ModelSpec::indexer_keys_in_cache.
double kv_bytes_per_token_layer(const config::ModelSpec& m);
// The same over all layers.
double kv_bytes_per_token(const config::ModelSpec& m);
// Main attention cache only (no indexer keys), over all layers: the numerator of Table 1's ratio.
double main_kv_bytes_per_token(const config::ModelSpec& m);

// ---- FLOPs (one layer unless stated) ----
// Sum over the chunk's new tokens i = 1..bsz of the tokens the main attention of token i reads:
// dense: cached + i; sparse (DSA): min(topk, cached + i).
double attended_tokens(const config::ModelSpec& m, const Chunk& c);
// Sum over i = 1..bsz of cached + i: the tokens the (dense) indexer scores. 0 for dense models.
double indexed_tokens(const config::ModelSpec& m, const Chunk& c);
// Attention FLOPs of one layer for one chunk:
//   2 x heads x (qk_head_dim + v_head_dim) x attended_tokens + 2 x indexer_heads x indexer_head_dim x
//   indexed_tokens.
double attention_flops(const config::ModelSpec& m, const Chunk& c);
// Non-attention FLOPs (projections, FFN/MoE, lm head) of one layer for `tokens` new tokens:
// 2 x active_params / layers per token (an even split over layers: a simplification).
double linear_flops(const config::ModelSpec& m, double tokens);
// FLOPs of a whole prefill of a chunk over all layers.
double prefill_flops(const config::ModelSpec& m, const Chunk& c);

// ---- Prefill times (one GPU, one layer) ----
// Predicted attention time of one layer for a set of chunks (the compute-quota predictor, §6.2):
// sum attention_flops / (FLOP/s x attention_mfu). No fixed overhead.
double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const std::vector<Chunk>& cs);
// Linear time of one layer for `tokens` new tokens: linear_flops / (FLOP/s x prefill_mfu).
double linear_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, double tokens);
// One full layer: attention + linear + prefill_layer_overhead_s (0 when the chunks hold no new token).
double layer_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const std::vector<Chunk>& cs);

// ---- Decode (one GPU, one step = one new token per request, all layers) ----
// `batch` requests whose contexts add up to `total_context` tokens (the tokens their new tokens attend to).
// Compute: linear FLOPs of `batch` tokens + attention over the contexts; sparse models bound the main
// attention by min(batch x topk, total_context) tokens (exact when every context is >= topk or <= topk)
// and add the indexer over total_context.
double decode_step_flops(const config::ModelSpec& m, int batch, double total_context);
// HBM bytes read: all of the GPU's weights (MoE: every local expert assumed active) + the KV read: main
// cache over the attended tokens (as above) and, for sparse models, the indexer keys over total_context
// (read even when indexer_keys_in_cache is false). Dense: weights + KV bytes of total_context.
// `weight_shards`: the GPUs the weights are sharded over (weight_shards_for_role of the decode role).
double decode_step_hbm_bytes(const config::ModelSpec& m, int batch, double total_context, int weight_shards);
// max(flops / (FLOP/s x decode_mfu), bytes / (hbm_bw x decode_hbm_efficiency)) + decode_step_overhead_s.
// 0 when batch == 0.
double decode_step_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                          double total_context, int weight_shards);

// ---- HBM ----
// HBM bytes left for KV on one GPU: hbm - weight_bytes_per_gpu - hbm_reserve_bytes, clamped at >= 0.
// The two-argument form uses ModelSpec::weight_shards; pass `weight_shards` when the engine knows its
// EP/TP group size.
double hbm_kv_bytes_per_gpu(const config::ModelSpec& m, const config::HardwareSpec& hw);
double hbm_kv_bytes_per_gpu(const config::ModelSpec& m, const config::HardwareSpec& hw, int weight_shards);
// The weight shards of a model on one role (prefill or decode) of `role_gpus` GPUs: an expert-parallel
// model (weight_shards > 1) spreads its sharded weights over every GPU of the role; a model with
// weight_shards = 1 holds a whole copy per GPU.
int weight_shards_for_role(const config::ModelSpec& m, int role_gpus);

// ---- Cache-compute ratio (DualPath §3, Table 1; PAPER.md §3.4) ----
// GB/PFLOP: (context x main_kv_bytes_per_token / 1e9) / (prefill_flops({context, append}) / 1e15).
// The main cache only: Table 1 (and CN-A's recomputation that reproduces it) leaves the indexer keys out.
double cache_compute_ratio_gb_per_pflop(const config::ModelSpec& m, double context, double append);

}  // namespace sim::cost
