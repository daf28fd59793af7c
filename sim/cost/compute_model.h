// Closed-form cost models of one LLM on one GPU (pure; no SimGrid). The formulas, their simplifications
// and their sources are documented in models/llm/README.md (the model's work) and models/engine/README.md
// (what the engine makes of the node); the numbers come from models/llm/*.json, models/hardware/*.json and
// models/engine/*.json. Units: tokens, FLOPs, bytes, seconds. Rates: the node's peaks times the engine's
// kernel fractions. REQUIRES for every function: non-negative token counts.
#pragma once

#include <vector>

#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"

namespace sim::cost {

// One request's share of a prefill forward batch: `cached` tokens whose KV already exists (storage hit
// or an earlier chunk) and `bsz` new tokens computed now (DualPath §6.2, PAPER.md §5.5).
struct Chunk {
  double cached = 0;
  double bsz = 0;
};

enum class Phase { kPrefill, kDecode };

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
// dense: cached + i; sparse (DSA): min(topk, cached + i); with sliding-window layers, the average layer:
// the full layers' cached + i and the sliding layers' min(window, cached + i), weighted by their counts.
double attended_tokens(const config::ModelSpec& m, const Chunk& c);
// Sum over i = 1..bsz of cached + i: the tokens the (dense) indexer scores. 0 for dense models.
double indexed_tokens(const config::ModelSpec& m, const Chunk& c);
// Attention FLOPs of one layer of a prefill chunk, in the form the model's prefill runs it: MQA (absorbed)
// form 2 x heads x (qk_head_dim + v_head_dim) x attended_tokens; MHA form (ModelSpec::prefill_mha, unless
// the absorbed form takes fewer FLOPs: a few new tokens over a long cache) 2 x heads x (prefill_qk_head_dim
// + prefill_v_head_dim) x attended_tokens + 2 x kv_up_params x cached (the cached tokens' latents expanded
// into the heads' keys and values); plus the DSA indexer's 2 x indexer_heads x indexer_head_dim x
// indexed_tokens.
double attention_flops(const config::ModelSpec& m, const Chunk& c);
// Non-attention FLOPs (projections, FFN/MoE, lm head) of one layer for `tokens` new tokens:
// 2 x active_params / layers per token (an even split over layers: a simplification).
double linear_flops(const config::ModelSpec& m, double tokens);
// FLOPs of a whole prefill of a chunk over all layers.
double prefill_flops(const config::ModelSpec& m, const Chunk& c);

// ---- The GPU's rates for this model: the node's peaks times the engine's kernel fractions ----
struct GpuRates {
  double prefill_attention = 0;      // FLOP/s of the main attention in the model's prefill form
  double prefill_attention_mqa = 0;  // the same in absorbed (MQA) form, which a chunk of a few new tokens
                                     // over a long cache runs in when it costs fewer FLOPs
  double decode_attention = 0;       // FLOP/s of the main attention in decode (dense or sparse kernel)
  double indexer = 0;                // FLOP/s of the DSA indexer (prefill and decode)
  double gemm = 0;                   // FLOP/s at the model's GEMM precision
  double decode_experts = 0;         // FLOP/s of the decode step's routed-expert GEMMs
  double prefill_experts = 0;        // FLOP/s of the prefill's routed-expert GEMMs
  double gemm_hbm = 0;               // B/s of weight reads
  double attention_hbm = 0;          // B/s of KV reads
};
GpuRates gpu_rates(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e);

// The expert-parallel group of a role: its GPUs (the weight shards) and the nodes they span.
struct EpGroup {
  int gpus = 1;
  int gpus_per_node = 1;
  int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};
// The EP group of a role of `role_gpus` GPUs: its weight shards (weight_shards_for_role).
EpGroup ep_group(const config::ModelSpec& m, const config::HardwareSpec& hw, int role_gpus);

// ---- Prefill times (one GPU, one layer, averaged over the model's layers) ----
// Attention of one layer for a set of chunks (the compute-quota predictor, §6.2): the main attention's FLOPs
// at the rate of the form it runs in (kernels.prefill_attention_mha or _mqa), the DSA indexer's at the
// indexer rate, all at kernels.prefill_efficiency of them. No fixed overhead.
double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const config::EngineSpec& e, const std::vector<Chunk>& cs);
double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const config::EngineSpec& e, const Chunk& c);
// The GEMMs every GPU runs on its own tokens (attention projections, shared experts, dense MLPs):
// max(2 x dense active params per layer x tokens / gemm, dense weight bytes per layer / gemm_hbm), 0 for
// 0 tokens. Dense active params = params.active - routed active params; dense weight bytes = a GPU's
// weights - its routed experts (weight_shards of them share the experts).
double dense_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                    double tokens, int weight_shards);
// The routed experts of one GPU of an EP group whose GPUs hold `tokens_per_gpu` new tokens on average: the
// group's tokens x active_experts spread evenly over its GPUs; max(FLOPs / rate, bytes of the experts
// touched / gemm_hbm), times moe.layers / layers, at the gemm rate (prefill) or the decode experts' rate
// (decode). 0 for a dense model or 0 tokens.
double expert_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                     Phase phase, double tokens_per_gpu, int weight_shards);
// dense_time_s + expert_time_s (prefill rates) for a GPU whose group averages its own tokens.
double linear_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                     double tokens, int weight_shards);
// The small kernels of one layer beside the GEMMs and attention (norms, RoPE, router and top-k, activations,
// quantisation) for `tokens` tokens: the engine's kernels.prefill_token_s or decode_token_s per token.
double token_kernels_s(const config::EngineSpec& e, Phase phase, double tokens);
// One full layer of a GPU alone (a group of one): attention + linear (at kernels.prefill_efficiency, as
// prefill_pass) + the small kernels + prefill_layer_overhead_s (0 when the chunks hold no new token).
double layer_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                    const std::vector<Chunk>& cs, int weight_shards);

// ---- EP exchange (MoE dispatch + combine), bytes of one GPU per layer averaged over the layers ----
// Each direction carries the same bytes when the group is balanced. `cnic`: to other nodes (the GPU's CNIC);
// `nvlink`: within the node; `nodes`: to every node its tokens go to, its own included (the prefill kernels'
// own accounting, config::ExchangeRateTable), dispatch and combine apart.
struct Exchange {
  double cnic = 0;
  double nvlink = 0;
  double nodes_dispatch = 0, nodes_combine = 0;
};
// The nodes a token's active_experts experts lie on, on average, in an EP group over `nodes` nodes: with
// group-limited routing (moe.expert_groups > 0 and a max_nodes_per_token limit: the token's experts in that
// many of the groups, the groups spread evenly over the nodes) the expected number of distinct nodes; else
// min(limit, nodes, active_experts). models/llm/README.md, "EP exchange".
double nodes_per_token(const config::ModelSpec& m, int nodes);
// Prefill (normal kernels, node-limited routing): a token goes once to each node it hits, (nodes - 1) / nodes
// of them remote, then over NVLink to its experts there.
Exchange prefill_exchange(const config::ModelSpec& m, double tokens_per_gpu, const EpGroup& ep);
// Decode (low-latency kernels): a token goes to each of its active_experts experts directly, over the CNIC
// to the (nodes - 1) / nodes on other nodes and over NVLink to the rest off its own GPU.
Exchange decode_exchange(const config::ModelSpec& m, double batch, const EpGroup& ep);
// The time of a prefill exchange `x` (one GPU, one layer, both directions' bytes): its remote bytes at the
// CNIC's line rate, or what the engine's normal kernels move (config::ExchangeRateTable) when that is slower.
double prefill_exchange_s(const config::HardwareSpec& hw, const config::EngineSpec& e, const Exchange& x,
                          const EpGroup& ep);
// The same for the dispatch and the combine apart, each the slower of its share of the line (by its bytes
// per value) and its kernels' time.
struct ExchangeParts {
  double dispatch = 0, combine = 0;
};
ExchangeParts prefill_exchange_parts(const config::HardwareSpec& hw, const config::EngineSpec& e,
                                     const Exchange& x, const EpGroup& ep);
// The part of a layer's dense GEMMs that is its shared experts: moe.shared_params x moe.layers / layers over
// the dense active parameters per layer (0 without shared experts).
double shared_expert_share(const config::ModelSpec& m);

// ---- Fixed costs of the EP exchange (models/engine/README.md, "Overlap and fixed costs") ----
// The fixed time of one MoE layer's dispatch plus its combine in an EP group of `ep_gpus` GPUs, beyond
// their bytes (the engine's latency table: linear in log2(ep_gpus) between its points, clamped at its
// ends). 0 for a group of one GPU or an empty table.
double ep_latency_s(const config::EngineSpec& e, Phase phase, int ep_gpus);
// The dispatch's and the combine's fixed times apart (ep_latency_s is their sum).
ExchangeParts ep_latency_parts(const config::EngineSpec& e, Phase phase, int ep_gpus);

// ---- Decode (one GPU, one step = each request's query of queries_per_step() tokens, all layers) ----
// `batch` requests whose contexts add up to `total_context` tokens (the tokens their new tokens attend to),
// each with `queries` query tokens (1 + MTP's draft tokens).
// Attention FLOPs: main attention over min(batch x topk, total_context) tokens for sparse models (exact
// when every context is >= topk or <= topk) plus the indexer over total_context, times `queries`.
double decode_step_flops(const config::ModelSpec& m, int batch, double total_context, int queries = 1);
// KV bytes read from HBM in one step: main cache over the attended tokens and, for sparse models, the
// indexer keys over total_context (read even when indexer_keys_in_cache is false), once whatever `queries`.
double decode_step_kv_bytes(const config::ModelSpec& m, int batch, double total_context);
// The attention of one step, all layers: max(main attention FLOPs / decode_attention + indexer FLOPs /
// indexer, KV bytes / attention_hbm). 0 when batch == 0.
double decode_attention_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                          const config::EngineSpec& e, int batch, double total_context, int queries = 1);

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
