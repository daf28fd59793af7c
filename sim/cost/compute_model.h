// Closed-form cost models of one LLM on one GPU (pure; no SimGrid). The formulas, their simplifications
// and their sources are documented in models/llm/README.md; the numbers come from models/llm/*.json.
// Units: tokens, FLOPs, bytes, seconds. Rates: the hardware file's peaks times its kernels' fractions.
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

// ---- The GPU's rates for this model (hardware kernels block; models/llm/README.md, "Compute") ----
struct GpuRates {
  double prefill_attention = 0;  // FLOP/s
  double decode_attention = 0;   // FLOP/s
  double indexer = 0;            // FLOP/s of the DSA indexer (prefill and decode)
  double gemm = 0;               // FLOP/s at the model's GEMM precision
  double gemm_hbm = 0;           // B/s of weight reads
  double attention_hbm = 0;      // B/s of KV reads
};
GpuRates gpu_rates(const config::ModelSpec& m, const config::HardwareSpec& hw);

// The expert-parallel group of a role: its GPUs (the weight shards) and the nodes they span.
struct EpGroup {
  int gpus = 1;
  int gpus_per_node = 1;
  int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};
// The EP group of a role of `role_gpus` GPUs: its weight shards (weight_shards_for_role).
EpGroup ep_group(const config::ModelSpec& m, const config::HardwareSpec& hw, int role_gpus);

// ---- Prefill times (one GPU, one layer, averaged over the model's layers) ----
// Attention of one layer for a set of chunks (the compute-quota predictor, §6.2): attention FLOPs at the
// prefill attention rate. No fixed overhead.
// The main attention's FLOPs run at the prefill attention rate, the DSA indexer's at the indexer rate, both
// at kernels.prefill_efficiency of them.
double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const std::vector<Chunk>& cs);
double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const Chunk& c);
// The GEMMs every GPU runs on its own tokens (attention projections, shared experts, dense MLPs):
// max(2 x dense active params per layer x tokens / gemm, dense weight bytes per layer / gemm_hbm), 0 for
// 0 tokens. Dense active params = params.active - routed active params; dense weight bytes = a GPU's
// weights - its routed experts (weight_shards of them share the experts).
double dense_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, double tokens,
                    int weight_shards);
// The routed experts of one GPU of an EP group whose GPUs hold `tokens_per_gpu` new tokens on average: the
// group's tokens x active_experts spread evenly over its GPUs; max(FLOPs / gemm, bytes of the experts
// touched / gemm_hbm), times moe.layers / layers. 0 for a dense model or 0 tokens.
double expert_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, double tokens_per_gpu,
                     int weight_shards);
// dense_time_s + expert_time_s for a GPU whose group averages its own tokens.
double linear_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, double tokens,
                     int weight_shards);
// One full layer of a GPU alone (a group of one): attention + linear + prefill_layer_overhead_s (0 when
// the chunks hold no new token).
double layer_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const std::vector<Chunk>& cs,
                    int weight_shards);

// ---- EP exchange (MoE dispatch + combine), bytes of one GPU per layer averaged over the layers ----
// Each direction carries the same bytes when the group is balanced. `cnic`: between nodes (the GPU's CNIC);
// `nvlink`: within the node.
struct Exchange {
  double cnic = 0;
  double nvlink = 0;
};
// Prefill (normal kernels, node-limited routing): a token goes once to each of min(max_nodes_per_token,
// nodes, active_experts) nodes, (nodes - 1) / nodes of them remote, then over NVLink to its experts there.
Exchange prefill_exchange(const config::ModelSpec& m, double tokens_per_gpu, const EpGroup& ep);
// Decode (low-latency kernels): a token goes to each of its active_experts experts directly, over the CNIC
// to the (nodes - 1) / nodes on other nodes and over NVLink to the rest off its own GPU.
Exchange decode_exchange(const config::ModelSpec& m, double batch, const EpGroup& ep);

// ---- Fixed costs of the EP exchange (models/llm/README.md, "Fixed costs and overlap") ----
enum class Phase { kPrefill, kDecode };
// The fixed time of one MoE layer's dispatch plus its combine in an EP group of `ep_gpus` GPUs, beyond
// their bytes (the hardware's collectives table: linear in log2(ep_gpus) between its points, clamped at
// its ends). 0 for a group of one GPU or an empty table.
double ep_latency_s(const config::HardwareSpec& hw, Phase phase, int ep_gpus);

// ---- Decode (one GPU, one step = one new token per request, all layers) ----
// `batch` requests whose contexts add up to `total_context` tokens (the tokens their new tokens attend to).
// Attention FLOPs: main attention over min(batch x topk, total_context) tokens for sparse models (exact
// when every context is >= topk or <= topk) plus the indexer over total_context.
double decode_step_flops(const config::ModelSpec& m, int batch, double total_context);
// KV bytes read from HBM in one step: main cache over the attended tokens and, for sparse models, the
// indexer keys over total_context (read even when indexer_keys_in_cache is false).
double decode_step_kv_bytes(const config::ModelSpec& m, int batch, double total_context);
// The attention of one step, all layers: max(main attention FLOPs / decode_attention + indexer FLOPs /
// indexer, KV bytes / attention_hbm). 0 when batch == 0.
double decode_attention_s(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                          double total_context);
// Compute time of one step: layers x [max(main attention FLOPs / decode_attention + indexer FLOPs / indexer,
// KV bytes / attention_hbm)
// + dense_time_s(batch) + decode_layer_overhead_s] + layers x expert_time_s(batch) + decode_step_overhead_s.
// 0 when batch == 0.
// `weight_shards`: the GPUs of the decode role's EP group (weight_shards_for_role).
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
