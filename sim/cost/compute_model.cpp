#include "sim/cost/compute_model.h"

#include <algorithm>

#include "sim/core/check.h"

namespace sim::cost {

namespace {

double peak_flops(const config::ModelSpec& m, const config::HardwareSpec& hw) {
  return hw.gpu_flops * m.peak_flops_factor;
}

// FLOPs per (query, attended token) pair of the main attention, one layer: score + value products.
double main_flops_per_pair(const config::ModelSpec& m) {
  return 2.0 * m.heads * (m.qk_head_dim + m.v_head_dim);
}

// FLOPs per (query, scored token) pair of the DSA indexer, one layer.
double indexer_flops_per_pair(const config::ModelSpec& m) {
  return m.sparse() ? 2.0 * m.indexer_heads * m.indexer_head_dim : 0.0;
}

void check_chunk(const Chunk& c) {
  SIM_CHECK(c.cached >= 0 && c.bsz >= 0, "chunk with negative tokens: cached {} bsz {}", c.cached, c.bsz);
}

// Sum over i = 1..b of (c + i).
double causal_sum(double c, double b) {
  return b * c + b * (b + 1) / 2;
}

}  // namespace

double kv_bytes_per_token_layer(const config::ModelSpec& m) {
  return m.main_kv_bytes_per_token_layer +
         (m.indexer_keys_in_cache ? m.indexer_kv_bytes_per_token_layer : 0.0);
}

double kv_bytes_per_token(const config::ModelSpec& m) {
  return kv_bytes_per_token_layer(m) * m.layers;
}

double main_kv_bytes_per_token(const config::ModelSpec& m) {
  return m.main_kv_bytes_per_token_layer * m.layers;
}

double attended_tokens(const config::ModelSpec& m, const Chunk& c) {
  check_chunk(c);
  if (!m.sparse()) return causal_sum(c.cached, c.bsz);
  // Tokens i with cached + i <= topk read their whole causal prefix; the rest read exactly topk.
  double k = m.sparse_topk;
  double n_short = std::clamp(k - c.cached, 0.0, c.bsz);
  return causal_sum(c.cached, n_short) + (c.bsz - n_short) * k;
}

double indexed_tokens(const config::ModelSpec& m, const Chunk& c) {
  check_chunk(c);
  return m.sparse() ? causal_sum(c.cached, c.bsz) : 0.0;
}

double attention_flops(const config::ModelSpec& m, const Chunk& c) {
  return main_flops_per_pair(m) * attended_tokens(m, c) + indexer_flops_per_pair(m) * indexed_tokens(m, c);
}

double linear_flops(const config::ModelSpec& m, double tokens) {
  SIM_CHECK(tokens >= 0, "negative token count {}", tokens);
  return 2.0 * m.active_params / m.layers * tokens;
}

double prefill_flops(const config::ModelSpec& m, const Chunk& c) {
  return m.layers * (attention_flops(m, c) + linear_flops(m, c.bsz));
}

double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const std::vector<Chunk>& cs) {
  double flops = 0;
  for (const Chunk& c : cs) flops += attention_flops(m, c);
  return flops / (peak_flops(m, hw) * m.attention_mfu);
}

double linear_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, double tokens) {
  return linear_flops(m, tokens) / (peak_flops(m, hw) * m.prefill_mfu);
}

double layer_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                    const std::vector<Chunk>& cs) {
  double tokens = 0;
  for (const Chunk& c : cs) tokens += c.bsz;
  if (tokens <= 0) return 0;
  return attention_time_s(m, hw, cs) + linear_time_s(m, hw, tokens) + m.prefill_layer_overhead_s;
}

namespace {

// Tokens the main attention reads in one decode step (see the header for the sparse bound).
double decode_attended(const config::ModelSpec& m, int batch, double total_context) {
  SIM_CHECK(batch >= 0 && total_context >= 0, "decode step with batch {} and context {}", batch,
            total_context);
  if (!m.sparse()) return total_context;
  return std::min(static_cast<double>(batch) * m.sparse_topk, total_context);
}

}  // namespace

double decode_step_flops(const config::ModelSpec& m, int batch, double total_context) {
  double per_layer = main_flops_per_pair(m) * decode_attended(m, batch, total_context) +
                     indexer_flops_per_pair(m) * total_context;
  return m.layers * (per_layer + linear_flops(m, batch));
}

double decode_step_hbm_bytes(const config::ModelSpec& m, int batch, double total_context, int weight_shards) {
  // The indexer keys sit in HBM and are scanned whether or not they travel with the stored cache.
  double indexer = m.sparse() ? m.indexer_kv_bytes_per_token_layer * total_context : 0.0;
  double kv =
      m.layers * (m.main_kv_bytes_per_token_layer * decode_attended(m, batch, total_context) + indexer);
  return m.weight_bytes_per_gpu(weight_shards) + kv;
}

double decode_step_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                          double total_context, int weight_shards) {
  if (batch == 0) return 0;
  double compute = decode_step_flops(m, batch, total_context) / (peak_flops(m, hw) * m.decode_mfu);
  double memory =
      decode_step_hbm_bytes(m, batch, total_context, weight_shards) / (hw.gpu_hbm_bw_Bps * m.decode_hbm_efficiency);
  return std::max(compute, memory) + m.decode_step_overhead_s;
}

double hbm_kv_bytes_per_gpu(const config::ModelSpec& m, const config::HardwareSpec& hw, int weight_shards) {
  SIM_CHECK(weight_shards >= 1, "weight_shards {} < 1", weight_shards);
  return std::max(0.0, hw.gpu_hbm_bytes - m.weight_bytes_per_gpu(weight_shards) - m.hbm_reserve_bytes);
}

double hbm_kv_bytes_per_gpu(const config::ModelSpec& m, const config::HardwareSpec& hw) {
  return hbm_kv_bytes_per_gpu(m, hw, m.weight_shards);
}

double cache_compute_ratio_gb_per_pflop(const config::ModelSpec& m, double context, double append) {
  SIM_CHECK(append > 0, "cache-compute ratio needs append > 0, got {}", append);
  double gb = context * main_kv_bytes_per_token(m) / 1e9;
  double pflop = prefill_flops(m, Chunk{context, append}) / 1e15;
  return gb / pflop;
}

int weight_shards_for_role(const config::ModelSpec& m, int role_gpus) {
  return m.weight_shards > 1 ? role_gpus : 1;
}

}  // namespace sim::cost
