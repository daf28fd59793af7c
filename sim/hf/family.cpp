// Which family a config belongs to, and the parts the families share.
#include <fmt/format.h>

#include <cmath>

#include "sim/hf/architecture.h"

namespace sim::hf {

namespace {

struct KnownType {
  const char* model_type;
  Family family;
};
// The model types dpsim imports (models/llm/README.md, "Importing a config").
constexpr KnownType kKnownTypes[] = {
    {"llama", Family::kDenseGqa}, {"mistral", Family::kDenseGqa},    {"qwen2", Family::kDenseGqa},
    {"qwen3", Family::kDenseGqa}, {"qwen3_moe", Family::kMoeGqa},    {"mixtral", Family::kMoeGqa},
    {"gpt_oss", Family::kMoeGqa}, {"deepseek_v2", Family::kMlaMoe},  {"deepseek_v3", Family::kMlaMoe},
    {"kimi_k2", Family::kMlaMoe}, {"deepseek_v32", Family::kMlaDsa},
};

}  // namespace

const char* describe(Family f) {
  switch (f) {
    case Family::kDenseGqa:
      return "dense GQA";
    case Family::kMoeGqa:
      return "MoE with GQA";
    case Family::kMlaMoe:
      return "MLA with MoE";
    case Family::kMlaDsa:
      return "MLA with MoE and DeepSeek Sparse Attention";
  }
  return "?";
}

std::string grouped(double v) {
  std::string digits = fmt::format("{:.0f}", std::fabs(v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

StatusOr<Family> family_of(ConfigReader& r) {
  const std::string type = r.string("model_type");
  if (!r.ok()) return r.status();
  for (const KnownType& k : kKnownTypes) {
    if (type != k.model_type) continue;
    // DeepSeek-V3's type with the DSA indexer's keys is V3.2's architecture.
    if (k.family == Family::kMlaMoe && r.has("index_topk")) return Family::kMlaDsa;
    return k.family;
  }
  std::string list;
  for (const KnownType& k : kKnownTypes) list += (list.empty() ? "" : ", ") + std::string(k.model_type);
  nlohmann::json got = type;
  r.fail("model_type", "one of " + list + " (the architectures dpsim imports, models/llm/README.md)", &got);
  return r.status();
}

StatusOr<Architecture> derive(ConfigReader& r) {
  StatusOr<Family> f = family_of(r);
  if (!f) return f.status();
  switch (*f) {
    case Family::kDenseGqa:
      return derive_dense_gqa(r);
    case Family::kMoeGqa:
      return derive_moe_gqa(r);
    case Family::kMlaMoe:
    case Family::kMlaDsa:
      return derive_mla(r, *f);
  }
  return Status::error("unreachable");
}

}  // namespace sim::hf
