// Dense GQA/MHA transformers: Llama 3.x, Mistral, Qwen2.5, Qwen3 dense.
#include <fmt/format.h>

#include "sim/hf/architecture.h"

namespace sim::hf {

StatusOr<Architecture> derive_dense_gqa(ConfigReader& r) {
  Architecture a;
  a.family = Family::kDenseGqa;
  a.model_type = r.string("model_type");
  a.layers = static_cast<int>(r.integer("num_hidden_layers", 1, 10000));
  a.max_context = static_cast<int>(r.integer("max_position_embeddings", 1, 1 << 30));
  const int h = static_cast<int>(r.integer("hidden_size", 1, 1000000));
  const double inter = static_cast<double>(r.integer("intermediate_size", 1, 100000000));
  const bool mlp_bias = a.model_type == "llama" && r.boolean_or("mlp_bias", false);
  if (!r.ok()) return r.status();
  const GqaAttention att = read_gqa_attention(r, h);
  const Sliding sw = read_sliding(r, a.layers, a.max_context);
  const Embeddings emb = read_embeddings(r, h);
  if (!r.ok()) return r.status();

  const double mlp = 3.0 * h * inter + (mlp_bias ? 2 * inter + h : 0);
  const double norms = 2.0 * h;
  const double layer = att.params_per_layer + mlp + norms;
  a.total = a.layers * layer + emb.embedding + emb.lm_head + h;
  a.active = emb.lm_head > 0 ? a.total - emb.embedding : a.total;  // tied: the matrix is the lm head too
  const std::string count = fmt::format(
      "per layer: attention ({}) + MLP 3 x hidden_size {} x intermediate_size {}{} = {} + norms 2 x {} = "
      "{}; x num_hidden_layers {} = {}; {}; final norm {}",
      att.arithmetic, h, grouped(inter), mlp_bias ? " + biases (mlp_bias)" : "", grouped(mlp), h,
      grouped(layer), a.layers, grouped(a.layers * layer), emb.arithmetic, h);
  a.sources["params.total"] = "derived from the config: " + count + "; total " + grouped(a.total);
  a.sources["params.active"] = fmt::format(
      "derived from the config: every parameter but the input embedding's lookup{} = {} - {} = {}",
      emb.lm_head > 0 ? "" : " (tied: it is also the lm head, so counted)", grouped(a.total),
      grouped(emb.lm_head > 0 ? emb.embedding : 0), grouped(a.active));

  set_gqa_attention(r, att, sw, h, a);
  set_shape_sources(a);
  return a;
}

}  // namespace sim::hf
