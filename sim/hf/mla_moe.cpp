// MLA with MoE: DeepSeek-V2, DeepSeek-V3, Kimi K2; with DeepSeek Sparse Attention's indexer: DeepSeek-V3.2.
#include <fmt/format.h>

#include "sim/hf/architecture.h"

namespace sim::hf {

StatusOr<Architecture> derive_mla(ConfigReader& r, Family f) {
  Architecture a;
  a.family = f;
  a.mla = true;
  a.model_type = r.string("model_type");
  a.layers = static_cast<int>(r.integer("num_hidden_layers", 1, 10000));
  a.max_context = static_cast<int>(r.integer("max_position_embeddings", 1, 1 << 30));
  const int h = static_cast<int>(r.integer("hidden_size", 1, 1000000));
  const int H = static_cast<int>(r.integer("num_attention_heads", 1, 100000));
  const int q_lora = static_cast<int>(r.integer_or("q_lora_rank", 0, 1, 1000000));  // null: no q compression
  const int kv_lora = static_cast<int>(r.integer("kv_lora_rank", 1, 1000000));
  const int nope = static_cast<int>(r.integer("qk_nope_head_dim", 1, 100000));
  const int rope = static_cast<int>(r.integer("qk_rope_head_dim", 0, 100000));
  const int v = static_cast<int>(r.integer("v_head_dim", 1, 100000));
  const bool bias = r.boolean_or("attention_bias", false);
  const double inter = static_cast<double>(r.integer("intermediate_size", 1, 100000000));
  const double moe_inter = static_cast<double>(r.integer("moe_intermediate_size", 1, 100000000));
  const int experts = static_cast<int>(r.integer("n_routed_experts", 1, 1 << 20));
  const int top = static_cast<int>(r.integer("num_experts_per_tok", 1, 1 << 20));
  const int shared = static_cast<int>(r.integer_or("n_shared_experts", 0, 0, 1 << 20));
  const int first_dense = static_cast<int>(r.integer_or("first_k_dense_replace", 0, 0, 10000));
  const int freq = static_cast<int>(r.integer_or("moe_layer_freq", 1, 1, 10000));
  const int n_group = static_cast<int>(r.integer_or("n_group", 1, 1, 1 << 20));
  const int topk_group = static_cast<int>(r.integer_or("topk_group", 1, 1, 1 << 20));
  const bool score_bias = r.optional_string("topk_method").value_or("") == "noaux_tc";
  const int mtp = static_cast<int>(r.integer_or("num_nextn_predict_layers", 0, 0, 100));
  int ih = 0, id = 0, topk = 0;
  if (f == Family::kMlaDsa) {
    ih = static_cast<int>(r.integer("index_n_heads", 1, 100000));
    id = static_cast<int>(r.integer("index_head_dim", 1, 100000));
    topk = static_cast<int>(r.integer("index_topk", 1, 1 << 30));
  }
  if (!r.ok()) return r.status();
  if (top > experts) {
    nlohmann::json got = top;
    r.fail("num_experts_per_tok", fmt::format("an integer <= n_routed_experts ({})", experts), &got);
  } else if (n_group > 1 && (experts % n_group != 0 || topk_group > n_group)) {
    nlohmann::json got = n_group;
    r.fail("n_group",
           fmt::format("a divisor of n_routed_experts ({}) and >= topk_group ({})", experts, topk_group),
           &got);
  }
  const Embeddings emb = read_embeddings(r, h);
  if (!r.ok()) return r.status();

  // Attention per layer (DeepSeek-V2's MLA): q through its latent when q_lora_rank is set.
  const double qk = nope + rope;
  const double q = q_lora > 0 ? double(h) * q_lora + q_lora + double(q_lora) * H * qk : double(h) * H * qk;
  const double kv_a = double(h) * (kv_lora + rope) + kv_lora;  // with its norm
  const double kv_b = double(kv_lora) * H * (nope + v);
  const double o = double(H) * v * h;
  const double b = bias ? (q_lora > 0 ? q_lora : 0) + (kv_lora + rope) + h : 0;  // q_a, kv_a, o
  const double attention = q + kv_a + kv_b + o + b;
  const double indexer = f == Family::kMlaDsa ? double(q_lora > 0 ? q_lora : h) * ih * id + double(h) * id +
                                                    2.0 * id + double(h) * ih
                                              : 0;
  int moe_layers = 0;
  for (int i = 0; i < a.layers; ++i)
    if (i >= first_dense && i % freq == 0) ++moe_layers;
  const double expert = 3.0 * h * moe_inter;
  const double router = double(h) * experts + (score_bias ? experts : 0);
  const double norms = 2.0 * h;
  const int dense_layers = a.layers - moe_layers;
  a.routed = double(moe_layers) * experts * expert;
  const double other = a.layers * (attention + indexer + norms) + dense_layers * 3.0 * h * inter +
                       moe_layers * (shared * expert + router) + emb.embedding + emb.lm_head + h;
  a.total = a.routed + other;
  a.active = a.total - a.routed + double(moe_layers) * top * expert - (emb.lm_head > 0 ? emb.embedding : 0);

  const std::string att_sum = fmt::format(
      "attention {} ({}q {}, kv_a {} x (kv_lora_rank {} + qk_rope_head_dim {}) + norm, kv_b kv_lora_rank x "
      "{} heads x (qk_nope_head_dim {} + v_head_dim {}), o {} x {} x {}{})",
      grouped(attention), q_lora > 0 ? fmt::format("q_lora_rank {}: ", q_lora) : "", grouped(q), h, kv_lora,
      rope, H, nope, v, H, v, h, bias ? ", biases" : "");
  const std::string ix_sum =
      f == Family::kMlaDsa
          ? fmt::format(
                " + indexer {} (wq_b {} x index_n_heads {} x index_head_dim {}, wk {} x {}, k norm 2 x {}, "
                "weights_proj {} x {})",
                grouped(indexer), q_lora > 0 ? q_lora : h, ih, id, h, id, id, h, ih)
          : "";
  a.sources["params.total"] = fmt::format(
      "derived from the config: per layer {}{} + norms {:g}, x {} layers; {} dense MLPs "
      "(first_k_dense_replace) of 3 x {} x intermediate_size {:g}; {} MoE layers of {} routed + {} shared "
      "experts (n_shared_experts) of 3 x {} x moe_intermediate_size {:g} = {} each, router {} x {}{}; {}; "
      "final norm {}; total {}{}",
      att_sum, ix_sum, norms, a.layers, dense_layers, h, inter, moe_layers, experts, shared, h, moe_inter,
      grouped(expert), h, experts, score_bias ? " + bias (noaux_tc)" : "", emb.arithmetic, h,
      grouped(a.total),
      mtp > 0
          ? fmt::format(" (the {} MTP module(s) of num_nextn_predict_layers, mtp_modules, not counted)", mtp)
          : "");
  a.sources["params.active"] = fmt::format(
      "derived from the config: total {} less the routed experts a token does not use ({} x ({} - {}) x "
      "{}) and the input embedding's lookup = {}",
      grouped(a.total), moe_layers, experts, top, grouped(expert), grouped(a.active));

  a.heads = H;
  a.qk_head_dim = kv_lora + rope;
  a.v_head_dim = kv_lora;
  a.kv_lora_rank = kv_lora;
  a.qk_rope_head_dim = rope;
  a.sources["attention.kind"] =
      fmt::format("config: MLA (kv_lora_rank {}, qk_rope_head_dim {})", kv_lora, rope);
  a.sources["attention.heads"] = fmt::format("config num_attention_heads = {}", H);
  a.sources["attention.qk_head_dim"] =
      fmt::format("derived: absorbed MLA key = kv_lora_rank {} + qk_rope_head_dim {} = {}", kv_lora, rope,
                  kv_lora + rope);
  a.sources["attention.v_head_dim"] = fmt::format("derived: absorbed MLA value = kv_lora_rank {}", kv_lora);
  if (f == Family::kMlaMoe) {
    a.prefill_mha = true;
    a.prefill_qk_head_dim = qk;
    a.prefill_v_head_dim = v;
    a.kv_up_params = kv_b;
    a.sources["attention.prefill_form"] =
        "dense MLA's prefill in MHA form, as DeepSeek runs V3's (models/llm/README.md, 'Which form dense "
        "MLA's prefill is counted in'); a chunk runs absorbed where that costs fewer FLOPs";
    a.sources["attention.prefill_qk_head_dim"] =
        fmt::format("config qk_nope_head_dim {} + qk_rope_head_dim {} = {:g}", nope, rope, qk);
    a.sources["attention.prefill_v_head_dim"] = fmt::format("config v_head_dim = {}", v);
    a.sources["attention.kv_up_params"] = fmt::format(
        "derived from the config: kv_b_proj expands the kv_lora_rank {} latent into {} heads x "
        "(qk_nope_head_dim {} + v_head_dim {}) = {} weights per layer",
        kv_lora, H, nope, v, grouped(kv_b));
  } else {
    a.sparse_topk = topk;
    a.indexer_heads = ih;
    a.indexer_head_dim = id;
    a.sources["attention.sparse_topk"] = fmt::format("config index_topk = {}", topk);
    a.sources["attention.indexer_heads"] = fmt::format("config index_n_heads = {}", ih);
    a.sources["attention.indexer_head_dim"] = fmt::format("config index_head_dim = {}", id);
    a.sources["attention.prefill_form"] =
        "DSA's sparse kernels run MLA absorbed (MQA form; models/llm/README.md)";
  }

  a.moe_layers = moe_layers;
  a.routed_experts = experts;
  a.active_experts = top;
  a.expert_params = expert;
  a.hidden = h;
  a.shared_params = shared * expert;
  if (shared > 0)
    a.sources["moe.shared_params"] =
        fmt::format("derived from the config: n_shared_experts {} x moe.expert_params = {}", shared,
                    grouped(a.shared_params));
  if (n_group > 1) {
    a.expert_groups = n_group;
    a.max_groups_per_token = topk_group;
    a.sources["moe.expert_groups"] = fmt::format(
        "config n_group = {} (topk_group = {}): group-limited routing, a token's {} experts in {} of the "
        "{} groups of {} experts",
        n_group, topk_group, top, topk_group, n_group, experts / n_group);
    a.sources["moe.max_nodes_per_token"] =
        fmt::format("config topk_group = {}: the groups a token's experts lie in", topk_group);
  }
  a.sources["moe.layers"] = fmt::format(
      "config: num_hidden_layers {}, the first {} dense (first_k_dense_replace), then every moe_layer_freq "
      "{} = {}",
      a.layers, first_dense, freq, moe_layers);
  a.sources["moe.routed_experts"] = fmt::format("config n_routed_experts = {}", experts);
  a.sources["moe.active_experts"] = fmt::format("config num_experts_per_tok = {}", top);
  a.sources["moe.expert_params"] = fmt::format(
      "derived from the config: gate, up and down projections of moe_intermediate_size {:g} on hidden_size "
      "{} = 3 x {} x {:g} = {}",
      moe_inter, h, h, moe_inter, grouped(expert));
  a.sources["moe.hidden"] = fmt::format("config hidden_size = {}", h);
  set_shape_sources(a);
  a.mtp_modules = mtp;
  a.sources["mtp_modules"] = fmt::format(
      "config num_nextn_predict_layers = {}{}", mtp,
      mtp > 0 ? ": an engine's decode.mtp runs on them; their weights are not counted in params" : "");
  return a;
}

}  // namespace sim::hf
