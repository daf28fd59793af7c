// The parts of a GQA model that its dense and MoE forms share: the attention's projections, sliding-window
// layers, embeddings.
#include <fmt/format.h>

#include <algorithm>

#include "sim/hf/architecture.h"

namespace sim::hf {

GqaAttention read_gqa_attention(ConfigReader& r, int hidden) {
  GqaAttention a;
  const std::string type = r.string("model_type");
  a.heads = static_cast<int>(r.integer("num_attention_heads", 1, 100000));
  a.kv_heads = static_cast<int>(r.integer_or("num_key_value_heads", a.heads, 1, 100000));
  const bool explicit_dim = r.has("head_dim");
  a.head_dim = static_cast<double>(r.integer_or("head_dim", 0, 1, 100000));
  if (!r.ok()) return a;
  if (a.heads % a.kv_heads != 0) {
    nlohmann::json got = a.kv_heads;
    r.fail("num_key_value_heads", fmt::format("a divisor of num_attention_heads ({})", a.heads), &got);
    return a;
  }
  if (!explicit_dim) {
    if (hidden % a.heads != 0) {
      nlohmann::json got = a.heads;
      r.fail("num_attention_heads",
             fmt::format("a divisor of hidden_size ({}) when head_dim is absent", hidden), &got);
      return a;
    }
    a.head_dim = hidden / a.heads;  // NOLINT(bugprone-integer-division): exact, checked just above
  }
  const double q = a.heads * a.head_dim, kv = a.kv_heads * a.head_dim, h = hidden;
  // Biases: Qwen2 has them on q, k and v (not o); Llama, Qwen3 and gpt-oss on all four when attention_bias.
  bool qkv_bias = false, o_bias = false;
  std::string bias_note = "no biases";
  if (type == "qwen2") {
    qkv_bias = true;
    bias_note = "q, k and v biases (Qwen2)";
  } else if (type == "llama" || type == "qwen3" || type == "qwen3_moe" || type == "gpt_oss") {
    qkv_bias = o_bias = r.boolean_or("attention_bias", false);
    if (qkv_bias) bias_note = "q, k, v and o biases (attention_bias)";
  }
  const bool qk_norm = type == "qwen3" || type == "qwen3_moe";  // RMSNorm on each head's q and k
  const bool sinks = type == "gpt_oss";                         // one learned sink logit per head
  a.params_per_layer = h * q + 2 * h * kv + q * h + (qkv_bias ? q + 2 * kv : 0) + (o_bias ? h : 0) +
                       (qk_norm ? 2 * a.head_dim : 0) + (sinks ? a.heads : 0);
  a.arithmetic = fmt::format("q {} x {}, k and v {} x {} each, o {} x {}, {}{}{} = {}", grouped(h),
                             grouped(q), grouped(h), grouped(kv), grouped(q), grouped(h), bias_note,
                             qk_norm ? ", q and k norms 2 x head_dim" : "", sinks ? ", a sink per head" : "",
                             grouped(a.params_per_layer));
  return a;
}

Sliding read_sliding(ConfigReader& r, int layers, int max_context) {
  Sliding s;
  const std::string type = r.string("model_type");
  const int window = static_cast<int>(r.integer_or("sliding_window", 0, 1, 1 << 30));
  const std::vector<std::string> types = r.strings("layer_types");
  if (!r.ok()) return s;
  if (!types.empty()) {
    if (static_cast<int>(types.size()) != layers) {
      nlohmann::json got = types.size();
      r.fail("layer_types", fmt::format("one entry per layer (num_hidden_layers = {})", layers), &got);
      return s;
    }
    for (const std::string& t : types) {
      if (t == "sliding_attention") {
        ++s.layers;
      } else if (t != "full_attention") {
        nlohmann::json got = t;
        r.fail("layer_types", "entries \"full_attention\" or \"sliding_attention\"", &got);
        return s;
      }
    }
    s.source = fmt::format("layer_types: {} of {} layers \"sliding_attention\"", s.layers, layers);
  } else if (type == "qwen2" || type == "qwen3" || type == "qwen3_moe") {
    // Qwen: layers from max_window_layers on use the window, when use_sliding_window.
    if (r.boolean_or("use_sliding_window", false)) {
      const int first = static_cast<int>(r.integer_or("max_window_layers", layers, 0, 10000));
      s.layers = std::max(0, layers - first);
      s.source = fmt::format("use_sliding_window true: layers from max_window_layers {} on", first);
    } else {
      s.source = "use_sliding_window false: every layer attends its whole context";
    }
  } else if (type == "mistral" || type == "mixtral") {
    if (window > 0) {
      s.layers = layers;
      s.source = fmt::format("sliding_window {}: every layer (Mistral)", window);
    } else {
      s.source = "sliding_window null: every layer attends its whole context";
    }
  } else {
    s.source = "no sliding-window layers in this architecture";
  }
  if (s.layers > 0) {
    if (window <= 0) {
      r.fail("sliding_window", "an integer >= 1 (the config has sliding-window layers)", nullptr);
      return s;
    }
    if (window >= max_context) {
      s.source += fmt::format("; window {} >= max_position_embeddings {}: no effect", window, max_context);
      s.layers = 0;
      return s;
    }
    s.window = window;
  }
  return s;
}

void set_gqa_attention(ConfigReader& r, const GqaAttention& att, const Sliding& sw, int hidden,
                       Architecture& a) {
  a.heads = att.heads;
  a.kv_heads = att.kv_heads;
  a.head_dim = att.head_dim;
  a.qk_head_dim = a.v_head_dim = att.head_dim;
  a.sources["attention.kind"] =
      fmt::format("config: num_attention_heads {} over num_key_value_heads {} (GQA; MHA when equal)",
                  att.heads, att.kv_heads);
  a.sources["attention.heads"] = fmt::format("config num_attention_heads = {}", att.heads);
  const std::string dim = r.has("head_dim")
                              ? fmt::format("config head_dim = {:g}", att.head_dim)
                              : fmt::format("config hidden_size {} / num_attention_heads {} = {:g}", hidden,
                                            att.heads, att.head_dim);
  a.sources["attention.qk_head_dim"] = dim;
  a.sources["attention.v_head_dim"] = dim;
  a.sliding_window = sw.window;
  a.sliding_layers = sw.layers;
  if (sw.layers > 0) {
    a.sources["attention.sliding_window"] = fmt::format("config sliding_window = {}", sw.window);
    a.sources["attention.sliding_layers"] = "config " + sw.source;
  }
  a.notes.push_back("Sliding-window layers: " + sw.source + ".");
}

void set_shape_sources(Architecture& a) {
  a.sources["layers"] = fmt::format("config num_hidden_layers = {}", a.layers);
  a.sources["max_context_tokens"] = fmt::format("config max_position_embeddings = {}", a.max_context);
}

Embeddings read_embeddings(ConfigReader& r, int hidden) {
  Embeddings e;
  const double vocab = static_cast<double>(r.integer("vocab_size", 1, 100000000));
  const bool tied = r.boolean_or("tie_word_embeddings", false);
  e.embedding = vocab * hidden;
  e.lm_head = tied ? 0 : e.embedding;
  e.arithmetic = fmt::format(
      "embedding vocab_size {} x hidden_size {} = {}{}", grouped(vocab), hidden, grouped(e.embedding),
      tied ? ", tied to the lm head (tie_word_embeddings)" : ", lm head the same (untied)");
  return e;
}

}  // namespace sim::hf
