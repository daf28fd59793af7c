#include "sim/config/model_spec.h"

#include <fmt/format.h>

#include <filesystem>

#include "sim/config/json_util.h"

namespace sim::config {

namespace {

// "notes": a string or an array of strings; "sources": every key the path of a field of this file.
void read_documentation(JsonReader& r, const nlohmann::json& root, ModelSpec& m) {
  read_notes(r);
  read_sources(r, root, m.sources);
}

void read_params(JsonReader& p, ModelSpec& m, const ModelSpec& def) {
  m.active_params = p.positive("active", std::nullopt);
  m.total_params = p.positive("total", std::nullopt);
  m.replicated_params = p.non_negative("replicated", def.replicated_params);
  m.weight_bytes_per_param = p.number("weight_bytes_per_param", def.weight_bytes_per_param, 0, 8, false);
  m.expert_weight_bytes_per_param =
      p.number("expert_weight_bytes_per_param", def.expert_weight_bytes_per_param, 0, 8);
  m.weight_shards = static_cast<int>(p.integer("weight_shards", def.weight_shards, 1, 100000));
  const int unit_def = m.weight_shards > 1 ? 0 : 1;
  m.prefill_ep_gpus = static_cast<int>(p.integer("prefill_ep_gpus", unit_def, 0, 1000000));
  m.decode_ep_gpus = static_cast<int>(p.integer("decode_ep_gpus", unit_def, 0, 1000000));
  if (!p.ok()) return;
  if (m.weight_shards == 1)  // every GPU holds the whole model: a unit is one GPU
    for (const char* key : {"prefill_ep_gpus", "decode_ep_gpus"})
      if (p.raw(key) != nullptr && *p.raw(key) != 1) {
        p.fail(key,
               "1 or absent (params.weight_shards = 1: every GPU holds the whole model, a unit is one GPU)",
               p.raw(key));
        return;
      }
  if (m.active_params > m.total_params)
    p.fail("active", fmt::format("a number <= params.total ({:g})", m.total_params), p.raw("active"));
  else if (m.replicated_params > m.total_params)
    p.fail("replicated", fmt::format("a number <= params.total ({:g})", m.total_params), p.raw("replicated"));
}

void read_kv(JsonReader& k, ModelSpec& m, const ModelSpec& def) {
  m.main_kv_bytes_per_token_layer = k.number("bytes_per_token_layer", std::nullopt, 0, 1e9, false);
  m.indexer_kv_bytes_per_token_layer =
      k.number("indexer_bytes_per_token_layer", def.indexer_kv_bytes_per_token_layer, 0, 1e9);
  m.indexer_keys_in_cache = k.boolean("indexer_keys_in_cache", def.indexer_keys_in_cache);
}

void read_attention(JsonReader& a, ModelSpec& m, const ModelSpec& def) {
  m.attention = a.one_of("kind", std::nullopt, {"mla", "gqa"});
  m.heads = static_cast<int>(a.integer("heads", std::nullopt, 1, 100000));
  m.qk_head_dim = a.number("qk_head_dim", std::nullopt, 0, 1e6, false);
  m.v_head_dim = a.number("v_head_dim", std::nullopt, 0, 1e6, false);
  m.sparse_topk = static_cast<int>(a.integer("sparse_topk", def.sparse_topk, 0, 1 << 30));
  m.indexer_heads = static_cast<int>(a.integer("indexer_heads", def.indexer_heads, 0, 100000));
  m.indexer_head_dim = a.number("indexer_head_dim", def.indexer_head_dim, 0, 1e6);
  m.sliding_window = static_cast<int>(a.integer("sliding_window", def.sliding_window, 0, 1 << 30));
  m.sliding_layers = static_cast<int>(a.integer("sliding_layers", def.sliding_layers, 0, 10000));
  if (!a.ok()) return;
  if ((m.sliding_window > 0) != (m.sliding_layers > 0)) {
    const char* key = m.sliding_window > 0 ? "sliding_layers" : "sliding_window";
    a.fail(key,
           "an integer >= 1 with the other of attention.sliding_window / sliding_layers (both or neither)",
           a.raw(key));
    return;
  }
  if (m.sliding_layers > m.layers) {
    a.fail("sliding_layers", fmt::format("an integer <= layers ({})", m.layers), a.raw("sliding_layers"));
    return;
  }
  if (m.sliding_layers > 0 && m.sparse_topk > 0) {
    a.fail("sliding_layers", "0 with sparse attention (attention.sparse_topk > 0)", a.raw("sliding_layers"));
    return;
  }
  const bool mla = m.attention == "mla";
  m.prefill_mha = a.one_of("prefill_form", mla ? "mqa" : "mha", {"mqa", "mha"}) == "mha";
  if (!a.ok()) return;
  if (!m.prefill_mha && !mla) {
    a.fail("prefill_form", "\"mha\" or absent for GQA (its heads' own keys and values)",
           a.raw("prefill_form"));
    return;
  }
  // MLA in MHA form needs the heads' own dims and the expansion of a cached latent; GQA has them already.
  const bool needs = m.prefill_mha && mla;
  const std::optional<double> dim_def = needs ? std::nullopt : std::optional<double>(0);
  m.prefill_qk_head_dim = a.number("prefill_qk_head_dim", dim_def, 0, 1e6, !needs);
  m.prefill_v_head_dim = a.number("prefill_v_head_dim", dim_def, 0, 1e6, !needs);
  m.kv_up_params = a.number("kv_up_params", dim_def, 0, 1e15);
  if (!a.ok()) return;
  if (!needs)
    for (const char* key : {"prefill_qk_head_dim", "prefill_v_head_dim", "kv_up_params"})
      if (a.raw(key) != nullptr && *a.raw(key) != 0) {
        a.fail(key, "absent (only MLA with attention.prefill_form \"mha\" has it)", a.raw(key));
        return;
      }
  if (!mla) {  // GQA: the prefill's MHA form is the heads' own dims
    m.prefill_qk_head_dim = m.qk_head_dim;
    m.prefill_v_head_dim = m.v_head_dim;
  }
  if (m.sparse_topk > 0) {  // DeepSeek Sparse Attention needs its indexer
    if (m.indexer_heads == 0)
      a.fail("indexer_heads", "an integer >= 1 when attention.sparse_topk > 0", a.raw("indexer_heads"));
    else if (m.indexer_head_dim <= 0)
      a.fail("indexer_head_dim", "a number > 0 when attention.sparse_topk > 0", a.raw("indexer_head_dim"));
  } else if (m.indexer_heads != 0) {
    a.fail("indexer_heads", "0 for dense attention (attention.sparse_topk = 0)", a.raw("indexer_heads"));
  } else if (m.indexer_head_dim != 0) {
    a.fail("indexer_head_dim", "0 for dense attention (attention.sparse_topk = 0)",
           a.raw("indexer_head_dim"));
  }
}

void read_moe(JsonReader& e, ModelSpec& m, const ModelSpec& def) {
  m.moe_layers = static_cast<int>(e.integer("layers", std::nullopt, 1, 10000));
  m.routed_experts = static_cast<int>(e.integer("routed_experts", std::nullopt, 1, 1 << 20));
  m.active_experts = static_cast<int>(e.integer("active_experts", std::nullopt, 1, 1 << 20));
  m.expert_params = e.number("expert_params", std::nullopt, 0, 1e15, false);
  m.hidden = e.number("hidden", std::nullopt, 0, 1e9, false);
  m.shared_params = e.number("shared_params", def.shared_params, 0, 1e15);
  m.max_nodes_per_token =
      static_cast<int>(e.integer("max_nodes_per_token", def.max_nodes_per_token, 0, 1 << 20));
  m.expert_groups = static_cast<int>(e.integer("expert_groups", def.expert_groups, 0, 1 << 20));
  m.dispatch_bytes_per_value =
      e.number("dispatch_bytes_per_value", def.dispatch_bytes_per_value, 0, 16, false);
  m.combine_bytes_per_value = e.number("combine_bytes_per_value", def.combine_bytes_per_value, 0, 16, false);
  if (!e.ok()) return;
  if (m.active_experts > m.routed_experts)
    e.fail("active_experts", fmt::format("an integer <= moe.routed_experts ({})", m.routed_experts),
           e.raw("active_experts"));
  else if (m.moe_layers > m.layers)
    e.fail("layers", fmt::format("an integer <= layers ({})", m.layers), e.raw("layers"));
  else if (m.expert_groups > 0 && (m.routed_experts % m.expert_groups != 0 || m.max_nodes_per_token < 1 ||
                                   m.max_nodes_per_token > m.expert_groups))
    e.fail(
        "expert_groups",
        fmt::format("0, or a divisor of moe.routed_experts ({}) with 1 <= moe.max_nodes_per_token <= it (the "
                    "groups a token's experts lie in)",
                    m.routed_experts),
        e.raw("expert_groups"));
}

void read_compute(JsonReader& e, ModelSpec& m, const ModelSpec& def) {
  m.gemm_precision = e.one_of("gemm_precision", def.gemm_precision, {"fp8", "bf16"});
  m.hbm_reserve_bytes = e.non_negative("hbm_reserve_bytes", def.hbm_reserve_bytes);
}

// Checks across sections (run after every section parsed cleanly).
Status cross_check(const std::string& path, const nlohmann::json& doc, const ModelSpec& m) {
  auto got = [&](const char* a, const char* b) { return doc.at(a).at(b).dump(); };
  if (m.sparse() && m.indexer_kv_bytes_per_token_layer <= 0) {
    std::string g = doc.at("kv").contains("indexer_bytes_per_token_layer")
                        ? got("kv", "indexer_bytes_per_token_layer")
                        : std::string("nothing (the field is missing)");
    return Status::error(fmt::format(
        "{}: kv.indexer_bytes_per_token_layer: expected a number > 0 when attention.sparse_topk > 0 (the "
        "indexer keys take bytes; set kv.indexer_keys_in_cache to false to leave them out of transfers), got "
        "{}",
        path, g));
  }
  if (m.moe() && m.routed_params() > m.total_params)
    return Status::error(fmt::format(
        "{}: moe.expert_params: expected moe.layers x moe.routed_experts x moe.expert_params <= params.total "
        "({:g}), got {:g}",
        path, m.total_params, m.routed_params()));
  if (m.moe() && m.routed_active_params() > m.active_params)
    return Status::error(
        fmt::format("{}: moe.expert_params: expected moe.layers x moe.active_experts x moe.expert_params <= "
                    "params.active "
                    "({:g}), got {:g}",
                    path, m.active_params, m.routed_active_params()));
  if (m.moe() && m.moe_layers * m.shared_params > m.active_params - m.routed_active_params())
    return Status::error(fmt::format(
        "{}: moe.shared_params: expected moe.layers x moe.shared_params <= params.active less the routed "
        "experts' ({:g}), got {:g}",
        path, m.active_params - m.routed_active_params(), m.moe_layers * m.shared_params));
  if (!m.moe() && m.expert_weight_bytes_per_param > 0)
    return Status::error(fmt::format(
        "{}: params.expert_weight_bytes_per_param: expected 0 or absent for a model without moe, got {}",
        path, got("params", "expert_weight_bytes_per_param")));
  if (!m.sparse() && m.indexer_kv_bytes_per_token_layer > 0) {
    return Status::error(
        fmt::format("{}: kv.indexer_bytes_per_token_layer: expected 0 for dense attention "
                    "(attention.sparse_topk = 0), got {}",
                    path, got("kv", "indexer_bytes_per_token_layer")));
  }
  return Status::ok();
}

StatusOr<ModelSpec> model_from_json(const StatusOr<nlohmann::json>& doc, const std::string& path) {
  if (!doc) return doc.status();

  ModelSpec m;
  const ModelSpec def;
  m.file = path;
  if (doc->is_object() && doc->contains("efficiency"))
    return Status::error(fmt::format(
        "{}: efficiency: this section is gone: the kernels' rates and fixed overheads are the engine "
        "file's (kernels, models/engine/), hbm_reserve_bytes and the GEMM precision in compute "
        "(models/llm/README.md)",
        path));
  JsonReader r(*doc, path, "");
  m.name = r.string("name", std::filesystem::path(path).stem().string());
  read_documentation(r, *doc, m);
  m.layers = static_cast<int>(r.integer("layers", std::nullopt, 1, 10000));
  m.max_context = static_cast<int>(r.integer("max_context_tokens", def.max_context, 1, 1 << 30));
  m.mtp_modules = static_cast<int>(r.integer("mtp_modules", def.mtp_modules, 0, 100));
  r.object(
      "params", [&](JsonReader& p) { read_params(p, m, def); }, true);
  r.object(
      "kv", [&](JsonReader& k) { read_kv(k, m, def); }, true);
  r.object(
      "attention", [&](JsonReader& a) { read_attention(a, m, def); }, true);
  if (doc->contains("moe")) r.object("moe", [&](JsonReader& e) { read_moe(e, m, def); });  // dense: absent
  r.object("compute", [&](JsonReader& e) { read_compute(e, m, def); });
  SIM_RETURN_IF_ERROR(r.finish());
  SIM_RETURN_IF_ERROR(cross_check(path, *doc, m));
  return m;
}

}  // namespace

StatusOr<ModelSpec> load_model(const std::string& path) {
  return model_from_json(read_json_file(path), path);
}

StatusOr<ModelSpec> parse_model(const std::string& text, const std::string& name) {
  return model_from_json(parse_json_object(text, name), name);
}

}  // namespace sim::config
