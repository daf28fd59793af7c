// MoE transformers with GQA attention: Qwen3-MoE, Mixtral, gpt-oss.
#include <fmt/format.h>

#include <algorithm>

#include "sim/hf/architecture.h"

namespace sim::hf {

namespace {

// The routed experts of one type: counts, the FFN width and which layers are MoE.
struct MoeShape {
  int experts = 0, active = 0;
  double inter = 0;        // one expert's intermediate size
  double dense_inter = 0;  // a dense layer's (Qwen3-MoE's mlp_only_layers)
  int moe_layers = 0;
  bool expert_bias = false;  // gpt-oss: biases on the experts' projections
  bool router_bias = false;  // gpt-oss: a bias per expert on the router
  std::string source;        // the keys, said once
};

MoeShape read_shape(ConfigReader& r, const std::string& type, int layers) {
  MoeShape s;
  if (type == "qwen3_moe") {
    s.experts = static_cast<int>(r.integer("num_experts", 1, 1 << 20));
    s.active = static_cast<int>(r.integer("num_experts_per_tok", 1, 1 << 20));
    s.inter = static_cast<double>(r.integer("moe_intermediate_size", 1, 100000000));
    s.dense_inter = static_cast<double>(r.integer_or("intermediate_size", 0, 0, 100000000));
    const int step = static_cast<int>(r.integer_or("decoder_sparse_step", 1, 1, 10000));
    const std::vector<int64_t> dense = r.integers("mlp_only_layers", 0, layers - 1);
    for (int i = 0; i < layers; ++i)
      if (std::find(dense.begin(), dense.end(), i) == dense.end() && (i + 1) % step == 0) ++s.moe_layers;
    s.source = fmt::format(
        "num_experts {}, num_experts_per_tok {}, moe_intermediate_size {:g}; MoE layers: every "
        "decoder_sparse_step {} not in mlp_only_layers ({} listed) = {}",
        s.experts, s.active, s.inter, step, dense.size(), s.moe_layers);
  } else {  // mixtral, gpt_oss: every layer's FFN is routed
    s.experts = static_cast<int>(r.integer("num_local_experts", 1, 1 << 20));
    s.active = static_cast<int>(r.integer("num_experts_per_tok", 1, 1 << 20));
    s.inter = static_cast<double>(r.integer("intermediate_size", 1, 100000000));
    s.moe_layers = layers;
    s.expert_bias = s.router_bias = type == "gpt_oss";
    s.source = fmt::format(
        "num_local_experts {}, num_experts_per_tok {}, intermediate_size {:g} per expert; every layer MoE",
        s.experts, s.active, s.inter);
  }
  if (r.ok() && s.active > s.experts) {
    nlohmann::json got = s.active;
    r.fail("num_experts_per_tok", fmt::format("an integer <= the routed experts ({})", s.experts), &got);
  }
  if (r.ok() && s.moe_layers < layers && s.dense_inter <= 0)
    r.fail("intermediate_size", "an integer >= 1 (the config has dense layers)", nullptr);
  return s;
}

}  // namespace

StatusOr<Architecture> derive_moe_gqa(ConfigReader& r) {
  Architecture a;
  a.family = Family::kMoeGqa;
  a.model_type = r.string("model_type");
  a.layers = static_cast<int>(r.integer("num_hidden_layers", 1, 10000));
  a.max_context = static_cast<int>(r.integer("max_position_embeddings", 1, 1 << 30));
  const int h = static_cast<int>(r.integer("hidden_size", 1, 1000000));
  if (!r.ok()) return r.status();
  const MoeShape s = read_shape(r, a.model_type, a.layers);
  const GqaAttention att = read_gqa_attention(r, h);
  const Sliding sw = read_sliding(r, a.layers, a.max_context);
  const Embeddings emb = read_embeddings(r, h);
  if (!r.ok()) return r.status();

  const double expert = 3.0 * h * s.inter + (s.expert_bias ? 2 * s.inter + h : 0);
  const double router = static_cast<double>(h) * s.experts + (s.router_bias ? s.experts : 0);
  const double dense_mlp = 3.0 * h * s.dense_inter;
  const int dense_layers = a.layers - s.moe_layers;
  const double norms = 2.0 * h;
  a.routed = static_cast<double>(s.moe_layers) * s.experts * expert;
  const double routed_active = static_cast<double>(s.moe_layers) * s.active * expert;
  const double other = a.layers * (att.params_per_layer + norms) + s.moe_layers * router +
                       dense_layers * dense_mlp + emb.embedding + emb.lm_head + h;
  a.total = a.routed + other;
  a.active = a.total - a.routed + routed_active - (emb.lm_head > 0 ? emb.embedding : 0);

  a.moe_layers = s.moe_layers;
  a.routed_experts = s.experts;
  a.active_experts = s.active;
  a.expert_params = expert;
  a.hidden = h;
  const std::string expert_sum =
      fmt::format("3 x hidden_size {} x {:g}{} = {}", h, s.inter,
                  s.expert_bias ? " + biases 2 x intermediate + hidden" : "", grouped(expert));
  a.sources["moe.layers"] = "config: " + s.source;
  a.sources["moe.routed_experts"] = fmt::format("config: {} routed experts per MoE layer", s.experts);
  a.sources["moe.active_experts"] = fmt::format("config num_experts_per_tok = {}", s.active);
  a.sources["moe.expert_params"] = "derived from the config: gate, up and down projections " + expert_sum;
  a.sources["moe.hidden"] = fmt::format("config hidden_size = {}", h);
  a.sources["params.total"] = fmt::format(
      "derived from the config: routed experts {} MoE layers x {} x {} = {}; per layer attention ({}) + "
      "norms {:g}, x {} layers; routers hidden x experts{} = {:g} per MoE layer; {} dense MLPs of 3 x {} x "
      "{:g}; {}; final norm {}; total {}",
      s.moe_layers, s.experts, grouped(expert), grouped(a.routed), att.arithmetic, norms, a.layers,
      s.router_bias ? " + bias" : "", router, dense_layers, h, s.dense_inter, emb.arithmetic, h,
      grouped(a.total));
  a.sources["params.active"] = fmt::format(
      "derived from the config: total {} less the routed experts a token does not use ({} x ({} - {}) x "
      "{}) and the input embedding's lookup{} = {}",
      grouped(a.total), s.moe_layers, s.experts, s.active, grouped(expert),
      emb.lm_head > 0 ? "" : " (tied: kept, it is the lm head)", grouped(a.active));

  set_gqa_attention(r, att, sw, h, a);
  set_shape_sources(a);
  return a;
}

}  // namespace sim::hf
