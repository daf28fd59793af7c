#include "sim/study/model_import.h"

#include <fmt/format.h>

#include <filesystem>

#include "sim/core/paths.h"
#include "sim/cost/compute_model.h"

namespace sim::study {

StatusOr<Outcome> model_import(const ModelImportSpec& spec) {
  StatusOr<hf::Imported> imp = hf::import_config(spec.import);
  if (!imp) return imp.status();
  const std::string out =
      spec.out.empty()
          ? (std::filesystem::path(project_root()) / "models" / "llm" / (imp->name + ".json")).string()
          : spec.out;
  if (!spec.force && std::filesystem::exists(out))
    return Status::error(
        fmt::format("--out: {} exists; expected a new file (or --force to replace it)", out));
  if (std::string err = write_file_atomically(out, imp->text); !err.empty())
    return Status::error("--out: " + err);

  const config::ModelSpec& m = imp->model;
  const hf::Precision& p = imp->precision;
  std::string t;
  t += fmt::format("imported {} ({}) from {}\n", imp->name, hf::describe(imp->arch.family),
                   spec.import.config);
  t += fmt::format("  layers {}, max context {} tokens\n", m.layers, m.max_context);
  t += fmt::format("  parameters: total {:.2f}B, active {:.2f}B, replicated {:.2f}B", m.total_params / 1e9,
                   m.active_params / 1e9, m.replicated_params / 1e9);
  if (m.moe())
    t += fmt::format("; {} MoE layers of {} experts ({} per token, {:.1f}M each)", m.moe_layers,
                     m.routed_experts, m.active_experts, m.expert_params / 1e6);
  t += "\n";
  t += fmt::format("  attention: {} heads, {}{}{}\n", m.heads, m.attention,
                   m.sparse() ? fmt::format(", DSA top-{}", m.sparse_topk) : "",
                   m.sliding() ? fmt::format(", {} of {} layers slide over {} tokens", m.sliding_layers,
                                             m.layers, m.sliding_window)
                               : "");
  t += fmt::format(
      "  weights: {:g} B/param{} ({})\n", m.weight_bytes_per_param,
      p.expert_weight_bytes > 0 ? fmt::format(", experts {:g} B/param", p.expert_weight_bytes) : "",
      p.weights_source);
  t += fmt::format("  KV cache: {} ({}): {:g} B per token and layer{}, {:.0f} B per token\n", p.kv,
                   p.kv_source, m.main_kv_bytes_per_token_layer,
                   m.indexer_kv_bytes_per_token_layer > 0
                       ? fmt::format(" + {:g} B of indexer keys", m.indexer_kv_bytes_per_token_layer)
                       : "",
                   cost::kv_bytes_per_token(m));
  t += fmt::format("  units on {}: prefill {} GPU(s), decode {} GPU(s) (room for {:.0f} KV tokens per GPU)\n",
                   spec.import.hardware, imp->prefill_ep, imp->decode_ep, imp->kv_room_tokens);
  t += fmt::format("wrote {}\n", out);
  return Outcome{t, Verdict::kPass};
}

}  // namespace sim::study
