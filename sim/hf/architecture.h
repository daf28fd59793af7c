// What a Hugging Face config says about a model's architecture, in dpsim's terms (models/llm/README.md),
// before a precision and deployment units are chosen: parameter counts, attention shape, the KV cache's
// values per token and layer, the routed experts. Each family of models/llm/README.md ("Importing a config")
// has its derivation in its own file; every field carries the config keys it came from and the arithmetic.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/hf/config_reader.h"

namespace sim::hf {

enum class Family { kDenseGqa, kMoeGqa, kMlaMoe, kMlaDsa };
const char* describe(Family f);

struct Architecture {
  Family family = Family::kDenseGqa;
  std::string model_type;
  std::vector<std::string> notes;
  // JSON path of a model-file field -> where its value comes from (config keys and arithmetic).
  std::map<std::string, std::string> sources;

  int layers = 0;
  int max_context = 0;
  int mtp_modules = 0;  // multi-token prediction (draft) modules the checkpoint ships

  // Parameters (all layers; the MTP module and the input-embedding lookup as below).
  double total = 0;   // every weight held in HBM
  double active = 0;  // multiplied per token: total less the input embedding and the routed experts a
                      // token does not use
  double routed = 0;  // routed experts over all MoE layers (0 for a dense model)

  // Attention.
  bool mla = false;
  int heads = 0;
  double qk_head_dim = 0, v_head_dim = 0;  // decode form (absorbed MLA; GQA: the head dim)
  bool prefill_mha = false;                // MLA: the prefill's MHA form
  double prefill_qk_head_dim = 0, prefill_v_head_dim = 0, kv_up_params = 0;
  int sparse_topk = 0, indexer_heads = 0;
  double indexer_head_dim = 0;
  int sliding_window = 0, sliding_layers = 0;

  // KV cache per token and layer, as values (bytes follow from the KV dtype): GQA: K and V of the KV heads;
  // MLA: the latent and the RoPE key.
  int kv_heads = 0;
  double head_dim = 0;
  int kv_lora_rank = 0, qk_rope_head_dim = 0;

  // Routed experts (moe_layers = 0: none).
  int moe_layers = 0, routed_experts = 0, active_experts = 0;
  double expert_params = 0, hidden = 0;
  double shared_params = 0;  // the shared experts of one MoE layer
  int expert_groups = 0, max_groups_per_token = 0;
};

// The family of a config, from its model_type (an error names the key and the types dpsim imports).
StatusOr<Family> family_of(ConfigReader& r);

// The derivations, one per family (dense_gqa.cpp, moe_gqa.cpp, mla_moe.cpp). Each reads its keys through
// `r`; on a missing or ill-typed key it returns r.status().
StatusOr<Architecture> derive_dense_gqa(ConfigReader& r);
StatusOr<Architecture> derive_moe_gqa(ConfigReader& r);
StatusOr<Architecture> derive_mla(ConfigReader& r, Family f);  // kMlaMoe or kMlaDsa

StatusOr<Architecture> derive(ConfigReader& r);

// Shared parts of the GQA families (gqa_parts.cpp).
struct GqaAttention {
  int heads = 0, kv_heads = 0;
  double head_dim = 0;
  double params_per_layer = 0;  // projections, biases, q/k norms, sinks
  std::string arithmetic;       // how params_per_layer was counted
};
GqaAttention read_gqa_attention(ConfigReader& r, int hidden);
// Sliding-window layers: (window, layers) and the sentence that says where they came from.
struct Sliding {
  int window = 0, layers = 0;
  std::string source;
};
Sliding read_sliding(ConfigReader& r, int layers, int max_context);
// Embedding and lm head: {embedding, lm head (0 when tied)} and the sentence.
struct Embeddings {
  double embedding = 0, lm_head = 0;
  std::string arithmetic;
};
Embeddings read_embeddings(ConfigReader& r, int hidden);

// Fills a GQA family's attention fields and their sources: heads, head dims (the config's head_dim, or
// hidden_size / heads), the sliding-window layers.
void set_gqa_attention(ConfigReader& r, const GqaAttention& att, const Sliding& sw, int hidden,
                       Architecture& a);
// The sources of layers and max_context_tokens, every family's.
void set_shape_sources(Architecture& a);

// "1,234,567" for source lines.
std::string grouped(double v);

}  // namespace sim::hf
