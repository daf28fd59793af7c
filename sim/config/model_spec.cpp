#include "sim/config/model_spec.h"

#include <fmt/format.h>

#include <filesystem>

#include "sim/config/json_util.h"

namespace sim::config {

namespace {

// The value at a dotted path ("params.active") of `root`, or nullptr.
const nlohmann::json* at_path(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = &root;
  size_t start = 0;
  while (true) {
    size_t dot = dotted.find('.', start);
    std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

// "notes": a string or an array of strings. "sources": field path -> non-empty string; every path must
// name a field of this file, so a typo in the documentation is caught like a typo in the data.
void read_documentation(JsonReader& r, const nlohmann::json& root, ModelSpec& m) {
  read_notes(r);
  const nlohmann::json* sources = r.raw("sources");
  if (sources == nullptr) return;
  if (!sources->is_object()) {
    r.fail("sources", "an object (field path -> where its value comes from)", sources);
    return;
  }
  for (auto it = sources->begin(); it != sources->end(); ++it) {
    const nlohmann::json* field = at_path(root, it.key());
    if (field == nullptr || field->is_object() || it.key().rfind("sources", 0) == 0) {
      r.fail_message(
          fmt::format("{}: sources.{}: expected the path of a field of this file (e.g. params.active)",
                      r.file(), it.key()));
      return;
    }
    if (!it.value().is_string() || it.value().get<std::string>().empty()) {
      r.fail_message(fmt::format("{}: sources.{}: expected a non-empty string, got {}", r.file(), it.key(),
                                 it.value().dump()));
      return;
    }
    m.sources[it.key()] = it.value().get<std::string>();
  }
}

void read_params(JsonReader& p, ModelSpec& m, const ModelSpec& def) {
  m.active_params = p.positive("active", std::nullopt);
  m.total_params = p.positive("total", std::nullopt);
  m.replicated_params = p.non_negative("replicated", def.replicated_params);
  m.weight_bytes_per_param = p.number("weight_bytes_per_param", def.weight_bytes_per_param, 0, 8, false);
  m.weight_shards = static_cast<int>(p.integer("weight_shards", def.weight_shards, 1, 100000));
  if (!p.ok()) return;
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
  if (!a.ok()) return;
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

void read_efficiency(JsonReader& e, ModelSpec& m, const ModelSpec& def) {
  m.peak_flops_factor = e.number("peak_flops_factor", def.peak_flops_factor, 0, 4, false);
  m.prefill_mfu = e.fraction("prefill_mfu", def.prefill_mfu);
  m.attention_mfu = e.fraction("attention_mfu", def.attention_mfu);
  m.decode_mfu = e.fraction("decode_mfu", def.decode_mfu);
  m.decode_hbm_efficiency = e.fraction("decode_hbm_efficiency", def.decode_hbm_efficiency);
  // More than 1 s per decode step or per layer is a unit typo (ms for s).
  m.decode_step_overhead_s = e.number("decode_step_overhead_s", def.decode_step_overhead_s, 0, 1.0);
  m.prefill_layer_overhead_s = e.number("prefill_layer_overhead_s", def.prefill_layer_overhead_s, 0, 1.0);
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
  if (!m.sparse() && m.indexer_kv_bytes_per_token_layer > 0) {
    return Status::error(
        fmt::format("{}: kv.indexer_bytes_per_token_layer: expected 0 for dense attention "
                    "(attention.sparse_topk = 0), got {}",
                    path, got("kv", "indexer_bytes_per_token_layer")));
  }
  return Status::ok();
}

StatusOr<ModelSpec> from_json(const StatusOr<nlohmann::json>& doc, const std::string& path) {
  if (!doc) return doc.status();

  ModelSpec m;
  const ModelSpec def;
  m.file = path;
  JsonReader r(*doc, path, "");
  m.name = r.string("name", std::filesystem::path(path).stem().string());
  read_documentation(r, *doc, m);
  m.layers = static_cast<int>(r.integer("layers", std::nullopt, 1, 10000));
  m.max_context = static_cast<int>(r.integer("max_context_tokens", def.max_context, 1, 1 << 30));
  r.object(
      "params", [&](JsonReader& p) { read_params(p, m, def); }, true);
  r.object(
      "kv", [&](JsonReader& k) { read_kv(k, m, def); }, true);
  r.object(
      "attention", [&](JsonReader& a) { read_attention(a, m, def); }, true);
  r.object("efficiency", [&](JsonReader& e) { read_efficiency(e, m, def); });
  SIM_RETURN_IF_ERROR(r.finish());
  SIM_RETURN_IF_ERROR(cross_check(path, *doc, m));
  return m;
}

}  // namespace

StatusOr<ModelSpec> load_model(const std::string& path) {
  return from_json(read_json_file(path), path);
}

StatusOr<ModelSpec> parse_model(const std::string& text, const std::string& name) {
  return from_json(parse_json_object(text, name), name);
}

}  // namespace sim::config
