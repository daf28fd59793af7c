#include "sim/cost/compute_model.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace sim::cost {

namespace {

// FLOPs per (query, attended token) pair of the main attention, one layer: score + value products, in the
// decode (absorbed) form.
double main_flops_per_pair(const config::ModelSpec& m) {
  return 2.0 * m.heads * (m.qk_head_dim + m.v_head_dim);
}

// The same in MHA form (the heads' own dims).
double mha_flops_per_pair(const config::ModelSpec& m) {
  return 2.0 * m.heads * (m.prefill_qk_head_dim + m.prefill_v_head_dim);
}

// FLOPs per (query, scored token) pair of the DSA indexer, one layer.
double indexer_flops_per_pair(const config::ModelSpec& m) {
  return m.sparse() ? 2.0 * m.indexer_heads * m.indexer_head_dim : 0.0;
}

// FLOPs per layer that expand the chunk's cached tokens' latents into the heads' keys and values (MLA in
// MHA form; the new tokens' expansion is part of the linear FLOPs).
double expansion_flops(const config::ModelSpec& m, const Chunk& c) {
  return 2.0 * m.kv_up_params * c.cached;
}

void check_chunk(const Chunk& c) {
  SIM_CHECK(c.cached >= 0 && c.bsz >= 0, "chunk with negative tokens: cached {} bsz {}", c.cached, c.bsz);
}

// Sum over i = 1..b of (c + i).
double causal_sum(double c, double b) {
  return b * c + b * (b + 1) / 2;
}

// The main attention's FLOPs of one layer of a chunk, and whether it runs in MHA form: a model whose prefill
// runs MHA (prefill_mha) runs a chunk so unless the absorbed form takes fewer FLOPs: a few new tokens over a
// long cache, whose expansion costs more than the smaller products save (DeepSeek-V3: below about 171 new
// tokens over a long cache), as the decode does.
struct MainAttention {
  double flops = 0;
  bool mha = false;
};
MainAttention main_attention(const config::ModelSpec& m, const Chunk& c) {
  const double pairs = attended_tokens(m, c);
  const double absorbed = main_flops_per_pair(m) * pairs;
  if (!m.prefill_mha) return {absorbed, false};
  const double mha = mha_flops_per_pair(m) * pairs + expansion_flops(m, c);
  return mha <= absorbed ? MainAttention{mha, true} : MainAttention{absorbed, false};
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

namespace {

// Sum over i = 1..b of min(k, c + i): tokens i with c + i <= k read their whole causal prefix, the rest
// exactly k.
double capped_causal_sum(double c, double b, double k) {
  double n_short = std::clamp(k - c, 0.0, b);
  return causal_sum(c, n_short) + (b - n_short) * k;
}

}  // namespace

double attended_tokens(const config::ModelSpec& m, const Chunk& c) {
  check_chunk(c);
  if (m.sparse()) return capped_causal_sum(c.cached, c.bsz, m.sparse_topk);
  if (!m.sliding()) return causal_sum(c.cached, c.bsz);
  // The average layer: the full-attention layers read the whole prefix, the sliding ones their window.
  const double full = m.layers - m.sliding_layers;
  return (full * causal_sum(c.cached, c.bsz) +
          m.sliding_layers * capped_causal_sum(c.cached, c.bsz, m.sliding_window)) /
         m.layers;
}

double indexed_tokens(const config::ModelSpec& m, const Chunk& c) {
  check_chunk(c);
  return m.sparse() ? causal_sum(c.cached, c.bsz) : 0.0;
}

double attention_flops(const config::ModelSpec& m, const Chunk& c) {
  if (c.bsz <= 0) return 0;
  return main_attention(m, c).flops + indexer_flops_per_pair(m) * indexed_tokens(m, c);
}

double linear_flops(const config::ModelSpec& m, double tokens) {
  SIM_CHECK(tokens >= 0, "negative token count {}", tokens);
  return 2.0 * m.active_params / m.layers * tokens;
}

double prefill_flops(const config::ModelSpec& m, const Chunk& c) {
  return m.layers * (attention_flops(m, c) + linear_flops(m, c.bsz));
}

GpuRates gpu_rates(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e) {
  GpuRates r;
  r.prefill_attention_mqa = hw.gpu_flops * e.k_prefill_attention_mqa;
  r.prefill_attention = m.prefill_mha ? hw.gpu_flops * e.k_prefill_attention_mha : r.prefill_attention_mqa;
  r.decode_attention = hw.gpu_flops * (m.sparse() ? e.k_decode_attention_sparse : e.k_decode_attention_dense);
  r.indexer = hw.gpu_flops * e.k_indexer;
  const double peak = m.gemm_precision == "bf16" ? hw.bf16_flops() : hw.gpu_flops;
  r.gemm = peak * e.k_gemm;
  r.decode_experts = peak * (e.k_decode_experts > 0 ? e.k_decode_experts : e.k_gemm);
  r.prefill_experts = peak * (e.k_prefill_experts > 0 ? e.k_prefill_experts : e.k_gemm);
  r.gemm_hbm = hw.gpu_hbm_bw_Bps * e.k_gemm_hbm;
  r.attention_hbm = hw.gpu_hbm_bw_Bps * e.k_attention_hbm;
  return r;
}

double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const config::EngineSpec& e, const Chunk& c) {
  if (c.bsz <= 0) return 0;
  const GpuRates r = gpu_rates(m, hw, e);
  const MainAttention a = main_attention(m, c);
  return (a.flops / (a.mha ? r.prefill_attention : r.prefill_attention_mqa) +
          indexer_flops_per_pair(m) * indexed_tokens(m, c) / r.indexer) /
         e.k_prefill_efficiency;
}

double attention_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const config::EngineSpec& e, const std::vector<Chunk>& cs) {
  double t = 0;
  for (const Chunk& c : cs) t += attention_time_s(m, hw, e, c);
  return t;
}

double dense_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                    double tokens, int weight_shards) {
  SIM_CHECK(tokens >= 0 && weight_shards >= 1, "dense GEMMs of {} tokens over {} shards", tokens,
            weight_shards);
  if (tokens <= 0) return 0;
  const GpuRates r = gpu_rates(m, hw, e);
  const double params = (m.active_params - m.routed_active_params()) / m.layers;
  const double bytes = (m.weight_bytes_per_gpu(weight_shards) -
                        m.routed_params() / weight_shards * m.expert_bytes_per_param()) /
                       m.layers;
  return std::max(2 * params * tokens / r.gemm, bytes / r.gemm_hbm);
}

double expert_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                     Phase phase, double tokens_per_gpu, int weight_shards) {
  SIM_CHECK(tokens_per_gpu >= 0 && weight_shards >= 1, "experts for {} tokens over {} shards", tokens_per_gpu,
            weight_shards);
  if (!m.moe() || tokens_per_gpu <= 0) return 0;
  const GpuRates r = gpu_rates(m, hw, e);
  const double pairs = tokens_per_gpu * m.active_experts;  // (token, expert) pairs on one GPU
  const double local = static_cast<double>(m.routed_experts) / weight_shards;
  const double flops = 2 * m.expert_params * pairs;
  const double bytes = std::min(local, pairs) * m.expert_params * m.expert_bytes_per_param();
  const double rate = phase == Phase::kDecode ? r.decode_experts : r.prefill_experts;
  return std::max(flops / rate, bytes / r.gemm_hbm) * m.moe_layers / m.layers;
}

double linear_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                     double tokens, int weight_shards) {
  return dense_time_s(m, hw, e, tokens, weight_shards) +
         expert_time_s(m, hw, e, Phase::kPrefill, tokens, weight_shards);
}

double token_kernels_s(const config::EngineSpec& e, Phase phase, double tokens) {
  SIM_CHECK(tokens >= 0, "small kernels of {} tokens", tokens);
  return tokens * (phase == Phase::kPrefill ? e.prefill_token_s : e.decode_token_s);
}

double layer_time_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                    const std::vector<Chunk>& cs, int weight_shards) {
  double tokens = 0;
  for (const Chunk& c : cs) tokens += c.bsz;
  if (tokens <= 0) return 0;
  return attention_time_s(m, hw, e, cs) +
         linear_time_s(m, hw, e, tokens, weight_shards) / e.k_prefill_efficiency +
         token_kernels_s(e, Phase::kPrefill, tokens) + e.prefill_layer_overhead_s;
}

namespace {

// Bytes one (token, destination) pair moves in dispatch and combine.
double exchange_bytes_per_pair(const config::ModelSpec& m) {
  return m.hidden * (m.dispatch_bytes_per_value + m.combine_bytes_per_value);
}

// C(n, k) as a double (small n).
double choose(int n, int k) {
  if (k < 0 || k > n) return 0;
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

}  // namespace

double nodes_per_token(const config::ModelSpec& m, int nodes) {
  const double n = nodes, k = m.active_experts;
  const int groups = m.expert_groups, top = m.max_nodes_per_token;
  if (groups <= 0 || top <= 0 || nodes <= 1) return std::min({top > 0 ? top : n, n, k});
  double hit = 0;
  if (nodes <= groups) {
    // Whole groups per node: groups % nodes of the nodes hold one more than the rest. The token's `top`
    // groups are a uniform draw; a node is missed when every one of them lies elsewhere.
    const int base = groups / nodes, extra = groups % nodes;
    const auto reached = [&](int held) { return 1 - choose(groups - held, top) / choose(groups, top); };
    hit = extra * reached(base + 1) + (nodes - extra) * reached(base);
  } else {
    // Each group spans nodes / groups nodes (or, where the groups do not divide the nodes evenly, that
    // spread as a mean): the k / top experts a token has in one of its groups land on distinct nodes of
    // that group's share as draws with replacement.
    const double span = n / groups, per_group = k / top;
    hit = top * span * (1 - std::pow(1 - 1 / span, per_group));
  }
  return std::min({hit, n, k});
}

Exchange prefill_exchange(const config::ModelSpec& m, double tokens_per_gpu, const EpGroup& ep) {
  Exchange x;
  if (!m.moe() || tokens_per_gpu <= 0) return x;
  const double n = ep.nodes(), g = std::min(ep.gpus, ep.gpus_per_node);
  const double nodes_hit = nodes_per_token(m, ep.nodes());
  const double per_layer = tokens_per_gpu * exchange_bytes_per_pair(m) * m.moe_layers / m.layers;
  x.cnic = per_layer * nodes_hit * (n - 1) / n;
  x.nvlink = per_layer * m.active_experts * (g - 1) / g;
  const double tokens_layer = tokens_per_gpu * m.hidden * m.moe_layers / m.layers * nodes_hit;
  x.nodes_dispatch = tokens_layer * m.dispatch_bytes_per_value;
  x.nodes_combine = tokens_layer * m.combine_bytes_per_value;
  return x;
}

Exchange decode_exchange(const config::ModelSpec& m, double batch, const EpGroup& ep) {
  Exchange x;
  if (!m.moe() || batch <= 0) return x;
  const double n = ep.nodes(), g = std::min(ep.gpus, ep.gpus_per_node);
  const double per_layer = batch * m.active_experts * exchange_bytes_per_pair(m) * m.moe_layers / m.layers;
  x.cnic = per_layer * (n - 1) / n;
  x.nvlink = per_layer / n * (g - 1) / g;
  return x;
}

double prefill_exchange_s(const config::HardwareSpec& hw, const config::EngineSpec& e, const Exchange& x,
                          const EpGroup& ep) {
  const double line = x.cnic / hw.cnic_bw_Bps;
  const config::ExchangeRateTable& t = e.prefill_exchange;
  if (t.ep_gpus.empty() || ep.nodes() <= 1) return line;
  const double kernels = x.nodes_dispatch / config::log2_interpolate(t.ep_gpus, t.dispatch_Bps, ep.gpus, 1) +
                         x.nodes_combine / config::log2_interpolate(t.ep_gpus, t.combine_Bps, ep.gpus, 1);
  return std::max(line, kernels);
}

ExchangeParts prefill_exchange_parts(const config::HardwareSpec& hw, const config::EngineSpec& e,
                                     const Exchange& x, const EpGroup& ep) {
  ExchangeParts p;
  const double bytes = x.nodes_dispatch + x.nodes_combine;
  if (bytes <= 0) return p;
  const double line = x.cnic / hw.cnic_bw_Bps;
  p.dispatch = line * x.nodes_dispatch / bytes;
  p.combine = line * x.nodes_combine / bytes;
  const config::ExchangeRateTable& t = e.prefill_exchange;
  if (t.ep_gpus.empty() || ep.nodes() <= 1) return p;
  p.dispatch = std::max(p.dispatch,
                        x.nodes_dispatch / config::log2_interpolate(t.ep_gpus, t.dispatch_Bps, ep.gpus, 1));
  p.combine =
      std::max(p.combine, x.nodes_combine / config::log2_interpolate(t.ep_gpus, t.combine_Bps, ep.gpus, 1));
  return p;
}

double shared_expert_share(const config::ModelSpec& m) {
  const double dense = (m.active_params - m.routed_active_params()) / m.layers;
  if (!m.moe() || dense <= 0) return 0;
  return std::min(1.0, m.shared_params * m.moe_layers / m.layers / dense);
}

namespace {

// Tokens the main attention reads in one decode step (see the header for the sparse bound).
double decode_attended(const config::ModelSpec& m, int batch, double total_context) {
  SIM_CHECK(batch >= 0 && total_context >= 0, "decode step with batch {} and context {}", batch,
            total_context);
  if (m.sparse()) return std::min(static_cast<double>(batch) * m.sparse_topk, total_context);
  if (!m.sliding()) return total_context;
  // The average layer (an upper bound on the sliding layers' share, as for DSA: the batch's contexts may be
  // uneven).
  const double windowed = std::min(static_cast<double>(batch) * m.sliding_window, total_context);
  return ((m.layers - m.sliding_layers) * total_context + m.sliding_layers * windowed) / m.layers;
}

}  // namespace

double decode_step_flops(const config::ModelSpec& m, int batch, double total_context, int queries) {
  return queries * m.layers *
         (main_flops_per_pair(m) * decode_attended(m, batch, total_context) +
          indexer_flops_per_pair(m) * total_context);
}

double decode_step_kv_bytes(const config::ModelSpec& m, int batch, double total_context) {
  // The indexer keys sit in HBM and are scanned whether or not they travel with the stored cache.
  const double indexer = m.sparse() ? m.indexer_kv_bytes_per_token_layer * total_context : 0.0;
  return m.layers * (m.main_kv_bytes_per_token_layer * decode_attended(m, batch, total_context) + indexer);
}

double decode_attention_s(const config::ModelSpec& m, const config::HardwareSpec& hw,
                          const config::EngineSpec& e, int batch, double total_context, int queries) {
  if (batch == 0) return 0;
  const GpuRates r = gpu_rates(m, hw, e);
  const double main = queries * m.layers * main_flops_per_pair(m) * decode_attended(m, batch, total_context);
  const double indexer = queries * m.layers * indexer_flops_per_pair(m) * total_context;
  return std::max(main / r.decode_attention + indexer / r.indexer,
                  decode_step_kv_bytes(m, batch, total_context) / r.attention_hbm);
}

ExchangeParts ep_latency_parts(const config::EngineSpec& e, Phase phase, int ep_gpus) {
  const config::EpLatencyTable& t = e.ep_latency;
  if (ep_gpus <= 1 || t.ep_gpus.empty()) return {};
  const std::vector<double>& d = phase == Phase::kDecode ? t.decode_dispatch_s : t.prefill_dispatch_s;
  const std::vector<double>& c = phase == Phase::kDecode ? t.decode_combine_s : t.prefill_combine_s;
  SIM_CHECK(d.size() == t.ep_gpus.size() && c.size() == t.ep_gpus.size(),
            "EP latency table of {} sizes with {} and {} values", t.ep_gpus.size(), d.size(), c.size());
  return {config::log2_interpolate(t.ep_gpus, d, ep_gpus, 0),
          config::log2_interpolate(t.ep_gpus, c, ep_gpus, 0)};
}

double ep_latency_s(const config::EngineSpec& e, Phase phase, int ep_gpus) {
  const ExchangeParts p = ep_latency_parts(e, phase, ep_gpus);
  return p.dispatch + p.combine;
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

EpGroup ep_group(const config::ModelSpec& m, const config::HardwareSpec& hw, int role_gpus) {
  return EpGroup{weight_shards_for_role(m, role_gpus), hw.gpus_per_node};
}

}  // namespace sim::cost
