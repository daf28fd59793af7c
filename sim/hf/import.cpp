#include "sim/hf/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/config/json_util.h"
#include "sim/core/paths.h"
#include "sim/cost/compute_model.h"
#include "sim/hf/deployment.h"

namespace sim::hf {

namespace {

namespace fs = std::filesystem;
using Doc = nlohmann::ordered_json;

// The DeepEP dispatch and combine precisions DeepSeek's inference system uses (day-6 overview): a property of
// the serving engine, which the config does not give; the shipped model files use the same.
constexpr double kDispatchBytes = 1.03125;
constexpr double kCombineBytes = 2;
constexpr double kHbmReserveBytes = 4e9;

// A number as JSON: an integer when it is one.
Doc num(double v) {
  if (std::fabs(v) < 9e15 && v == std::floor(v)) return static_cast<int64_t>(v);
  return v;
}

// The model as dpsim reads it, for `units` GPUs per unit (weight_shards); `replicated` by the family's rule.
config::ModelSpec to_spec(const Architecture& a, const Precision& p, double kv_layer, double ix_layer) {
  config::ModelSpec m;
  m.layers = a.layers;
  m.max_context = a.max_context;
  m.mtp_modules = a.mtp_modules;
  m.active_params = a.active;
  m.total_params = a.total;
  m.replicated_params = a.moe_layers > 0 ? a.total - a.routed : 0;
  m.weight_bytes_per_param = p.weight_bytes;
  m.expert_weight_bytes_per_param = p.expert_weight_bytes;
  m.main_kv_bytes_per_token_layer = kv_layer;
  m.indexer_kv_bytes_per_token_layer = ix_layer;
  m.indexer_keys_in_cache = ix_layer > 0;
  m.attention = a.mla ? "mla" : "gqa";
  m.heads = a.heads;
  m.qk_head_dim = a.qk_head_dim;
  m.v_head_dim = a.v_head_dim;
  m.sparse_topk = a.sparse_topk;
  m.indexer_heads = a.indexer_heads;
  m.indexer_head_dim = a.indexer_head_dim;
  m.moe_layers = a.moe_layers;
  m.routed_experts = a.routed_experts;
  m.active_experts = a.active_experts;
  m.expert_params = a.expert_params;
  m.shared_params = a.shared_params;
  m.hidden = a.hidden;
  m.hbm_reserve_bytes = kHbmReserveBytes;
  return m;
}

Doc build_doc(const std::string& name, const std::string& config_file, const Architecture& a,
              const Precision& p, const config::ModelSpec& m, int weight_shards, int prefill_ep,
              int decode_ep, const std::map<std::string, std::string>& extra_sources) {
  std::map<std::string, std::string> src = a.sources;
  for (const auto& [k, v] : extra_sources) src[k] = v;
  Doc notes = Doc::array();
  notes.push_back(
      fmt::format("Imported by `dpsim model import` from {} ({}, model_type {}): every value below is the "
                  "config's or derived from it as its sources entry says; the precision and the deployment "
                  "units as said there.",
                  config_file, describe(a.family), a.model_type));
  for (const std::string& n : a.notes) notes.push_back(n);

  Doc d;
  d["name"] = name;
  d["notes"] = notes;
  d["sources"] = Doc::object();
  d["layers"] = a.layers;
  d["max_context_tokens"] = a.max_context;
  if (a.mtp_modules > 0 || a.sources.count("mtp_modules") > 0) d["mtp_modules"] = a.mtp_modules;
  Doc params;
  params["active"] = num(a.active);
  params["total"] = num(a.total);
  params["replicated"] = num(m.replicated_params);
  params["weight_bytes_per_param"] = num(p.weight_bytes);
  if (p.expert_weight_bytes > 0) params["expert_weight_bytes_per_param"] = num(p.expert_weight_bytes);
  params["weight_shards"] = weight_shards;
  params["prefill_ep_gpus"] = prefill_ep;
  params["decode_ep_gpus"] = decode_ep;
  d["params"] = params;
  Doc kv;
  kv["bytes_per_token_layer"] = num(m.main_kv_bytes_per_token_layer);
  kv["indexer_bytes_per_token_layer"] = num(m.indexer_kv_bytes_per_token_layer);
  kv["indexer_keys_in_cache"] = m.indexer_keys_in_cache;
  d["kv"] = kv;
  Doc att;
  att["kind"] = a.mla ? "mla" : "gqa";
  att["heads"] = a.heads;
  att["qk_head_dim"] = num(a.qk_head_dim);
  att["v_head_dim"] = num(a.v_head_dim);
  if (a.mla) att["prefill_form"] = a.prefill_mha ? "mha" : "mqa";
  if (a.prefill_mha) {
    att["prefill_qk_head_dim"] = num(a.prefill_qk_head_dim);
    att["prefill_v_head_dim"] = num(a.prefill_v_head_dim);
    att["kv_up_params"] = num(a.kv_up_params);
  }
  att["sparse_topk"] = a.sparse_topk;
  att["indexer_heads"] = a.indexer_heads;
  att["indexer_head_dim"] = num(a.indexer_head_dim);
  if (a.sliding_layers > 0) {
    att["sliding_window"] = a.sliding_window;
    att["sliding_layers"] = a.sliding_layers;
  }
  d["attention"] = att;
  if (a.moe_layers > 0) {
    Doc moe;
    moe["layers"] = a.moe_layers;
    moe["routed_experts"] = a.routed_experts;
    moe["active_experts"] = a.active_experts;
    moe["expert_params"] = num(a.expert_params);
    if (a.shared_params > 0) moe["shared_params"] = num(a.shared_params);
    moe["hidden"] = num(a.hidden);
    moe["max_nodes_per_token"] = a.max_groups_per_token;
    moe["expert_groups"] = a.expert_groups;
    moe["dispatch_bytes_per_value"] = kDispatchBytes;
    moe["combine_bytes_per_value"] = kCombineBytes;
    d["moe"] = moe;
  }
  Doc compute;
  compute["gemm_precision"] = p.gemm;
  compute["hbm_reserve_bytes"] = num(kHbmReserveBytes);
  d["compute"] = compute;

  // Sources in the order of the fields; a field without one has a generic line (there is none today: the
  // unit test of the shipped files requires one per number).
  Doc sources = Doc::object();
  sources["name"] = "the --name of `dpsim model import`, or the config's directory";
  std::function<void(const Doc&, const std::string&)> walk = [&](const Doc& node, const std::string& prefix) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
      if (path == "notes" || path == "sources" || path == "name") continue;
      if (it->is_object()) {
        walk(*it, path);
        continue;
      }
      auto s = src.find(path);
      sources[path] = s != src.end() ? s->second : "dpsim's default (models/llm/README.md)";
    }
  };
  walk(d, "");
  d["sources"] = sources;
  return d;
}

}  // namespace

std::string default_name(const std::string& config_path) {
  fs::path p(config_path);
  if (p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty())
    return p.parent_path().filename().string();
  return p.stem().string();
}

StatusOr<Imported> import_config_text(const std::string& text, const std::string& file,
                                      const ImportSpec& spec, const config::HardwareSpec& hw,
                                      const std::string& hw_file) {
  StatusOr<nlohmann::json> doc = config::parse_json_object(text, file);
  if (!doc) return doc.status();
  ConfigReader r(*doc, file);
  StatusOr<Architecture> arch = derive(r);
  if (!arch) return arch.status();
  StatusOr<Precision> prec = resolve_precision(r, *arch, spec.precision);
  if (!prec) return prec.status();
  const Architecture& a = *arch;
  const Precision& p = *prec;

  Imported out;
  out.name = spec.name.empty() ? default_name(file) : spec.name;
  out.arch = a;
  out.precision = p;
  const double kv_layer = kv_bytes_per_token_layer(a, p.kv);
  const double ix_layer = indexer_bytes_per_token_layer(a);
  config::ModelSpec m = to_spec(a, p, kv_layer, ix_layer);
  out.kv_room_tokens = spec.kv_room_tokens >= 0 ? static_cast<double>(spec.kv_room_tokens) : a.max_context;

  std::map<std::string, std::string> extra;
  int units[2] = {0, 0};
  const char* flags[2] = {"--prefill-ep", "--decode-ep"};
  const int given[2] = {spec.prefill_ep, spec.decode_ep};
  std::string unit_source[2];
  for (int i = 0; i < 2; ++i) {
    StatusOr<UnitChoice> c = given[i] >= 0 ? given_unit(m, hw, hw_file, given[i], flags[i], file)
                                           : smallest_unit(m, hw, hw_file, out.kv_room_tokens, file);
    if (!c) return c.status();
    units[i] = c->gpus;
    unit_source[i] = c->source;
  }
  out.prefill_ep = units[0];
  out.decode_ep = units[1];
  const bool moe = a.moe_layers > 0;
  const int largest = std::max(units[0], units[1]);
  // One GPU per unit: every GPU holds the whole model (weight_shards 1). Else an MoE model's experts shard
  // over its EP group and the rest is replicated (DP attention); a dense model's weights shard over its TP
  // group.
  const int shards = largest == 1 ? 1 : moe && units[0] > 1 ? units[0] : largest;
  if (shards == 1) {
    m.replicated_params = m.total_params;
    extra["params.replicated"] =
        "one GPU per unit: every GPU holds the whole model (params.weight_shards 1), all of it replicated";
  } else if (moe) {
    extra["params.replicated"] = fmt::format(
        "derived: everything but the routed experts (attention, dense MLPs, shared experts, routers, "
        "embeddings, norms), held whole by every GPU of an EP group under DP attention = {} - {}",
        grouped(a.total), grouped(a.routed));
  } else {
    m.replicated_params = 0;
    extra["params.replicated"] =
        "0: a dense model on more than one GPU per unit shards all its weights over the unit (tensor "
        "parallelism; its all-reduces inside a node are not modelled)";
  }
  m.weight_shards = shards;
  extra["params.weight_shards"] =
      shards == 1 ? "one GPU per unit (params.prefill_ep_gpus and decode_ep_gpus are 1)"
                  : fmt::format("the GPUs the weights shard over outside a run: the {} unit's {}",
                                moe ? "prefill" : "larger", shards);
  extra["params.prefill_ep_gpus"] = unit_source[0];
  extra["params.decode_ep_gpus"] = unit_source[1];
  extra["params.weight_bytes_per_param"] = p.weights_source;
  if (p.expert_weight_bytes > 0) extra["params.expert_weight_bytes_per_param"] = p.weights_source;
  extra["compute.gemm_precision"] = p.gemm_source;
  extra["compute.hbm_reserve_bytes"] =
      "documented default, as the shipped model files: activations, workspace and runtime per GPU";
  if (a.mla) {
    extra["kv.bytes_per_token_layer"] =
        p.kv == "fp8"
            ? fmt::format(
                  "{}; FlashMLA's FP8 layout: the kv_lora_rank {} latent in FP8 + one FP32 scale per 128 "
                  "values ({} B) + the qk_rope_head_dim {} RoPE key in BF16 ({} B) = {:g}",
                  p.kv_source, a.kv_lora_rank, std::ceil(a.kv_lora_rank / 128.0) * 4, a.qk_rope_head_dim,
                  a.qk_rope_head_dim * 2, kv_layer)
            : fmt::format("{}; (kv_lora_rank {} + qk_rope_head_dim {}) x 2 B = {:g}", p.kv_source,
                          a.kv_lora_rank, a.qk_rope_head_dim, kv_layer);
  } else {
    extra["kv.bytes_per_token_layer"] =
        fmt::format("{}; K and V of num_key_value_heads {} x head_dim {:g} x {} B = {:g}", p.kv_source,
                    a.kv_heads, a.head_dim, p.kv == "fp8" ? 1 : 2, kv_layer);
  }
  if (ix_layer > 0) {
    extra["kv.indexer_bytes_per_token_layer"] = fmt::format(
        "derived: the DSA indexer's key of index_head_dim {:g} in FP8 + one FP32 scale per 128 values = "
        "{:g} (DeepSeek-V3.2's indexer cache, whatever --kv says)",
        a.indexer_head_dim, ix_layer);
    extra["kv.indexer_keys_in_cache"] =
        "modelling choice, as ds660b: the indexer keys cannot be recomputed from the cache, so they travel "
        "with it";
  } else {
    extra["kv.indexer_bytes_per_token_layer"] = "dense attention: no indexer";
    extra["kv.indexer_keys_in_cache"] = "no indexer";
  }
  if (a.sparse_topk == 0) {
    extra["attention.sparse_topk"] = "dense attention";
    extra["attention.indexer_heads"] = "dense attention";
    extra["attention.indexer_head_dim"] = "dense attention";
  }
  if (moe) {
    extra["moe.dispatch_bytes_per_value"] =
        "not in the config (the engine's): DeepEP's FP8 dispatch with one FP32 scale per 128 values, 1 + "
        "4/128, as DeepSeek's day-6 inference overview";
    extra["moe.combine_bytes_per_value"] = "not in the config (the engine's): DeepEP's BF16 combine";
    if (a.expert_groups == 0) {
      extra["moe.expert_groups"] = "no group-limited routing in the config (n_group absent or 1)";
      extra["moe.max_nodes_per_token"] = "no node-limited routing in the config: 0 = no limit";
    }
  }

  Doc d = build_doc(out.name, file, a, p, m, shards, units[0], units[1], extra);
  out.text = d.dump(2) + "\n";
  // Read back by the loader: an import never writes a file dpsim refuses.
  StatusOr<config::ModelSpec> back = config::parse_model(out.text, out.name + ".json");
  if (!back)
    return Status::error(
        fmt::format("{}: the imported model does not load: {}", file, back.status().message()));
  out.model = *back;
  return out;
}

StatusOr<Imported> import_config(const ImportSpec& spec) {
  // As given, else relative to the project (models/llm/hf/...): the notes name it as given.
  StatusOr<std::string> text =
      config::read_text_file(resolve_path(spec.config, ""), "a JSON file", config::kMaxJsonFileBytes);
  if (!text) return text.status();
  const std::string hw_file = resolve_path(model_file_reference(spec.hardware, "hardware"), "");
  StatusOr<config::HardwareSpec> hw = config::load_hardware(hw_file);
  if (!hw) return Status::error(spec.config + ": --hardware: " + hw.status().message());
  return import_config_text(*text, spec.config, spec, *hw, spec.hardware);
}

}  // namespace sim::hf
