// Importing the public configs of DeepSeek-V3, DeepSeek-V3.2 and Qwen2.5-32B (models/llm/hf/) reproduces the
// hand-written model files dsv3, ds660b and qwen32b field by field: every field the model loader reads, the
// integers exactly and the numbers within the hand files' rounding (they write parameter counts to 5
// significant digits: 1e-4). The flags are the choices the hand files' sources give: the KV dtype (FlashMLA's
// BF16 for V3, its FP8 layout for V3.2, FP16 for Qwen per Table 1's caption) and the deployment units
// (DeepSeek's published EP32/EP144 for V3, the paper's 2P4D for V3.2, DP-only for Qwen).
#include <catch2/catch.hpp>
#include <string>

#include "sim/core/paths.h"
#include "sim/hf/import.h"
#include "tests/unit/paper_files.h"

namespace sim::hf {
namespace {

config::ModelSpec imported(const std::string& config, const std::string& kv, int prefill_ep, int decode_ep) {
  ImportSpec spec;
  spec.config = std::string(project_root()) + "/models/llm/hf/" + config;
  spec.precision.kv = kv;
  spec.prefill_ep = prefill_ep;
  spec.decode_ep = decode_ep;
  StatusOr<Imported> m = import_config(spec);
  INFO((m ? std::string("ok") : m.status().message()));
  REQUIRE(m);
  return m->model;
}

void check_same(const config::ModelSpec& hand, const config::ModelSpec& imp) {
  auto near = [](double a, double b) {
    return a == b || std::abs(a - b) <= 1e-4 * std::max(std::abs(a), std::abs(b));
  };
#define SAME_INT(f) CHECK(hand.f == imp.f)
#define SAME_NUM(f)                                         \
  do {                                                      \
    INFO(#f ": hand " << hand.f << ", imported " << imp.f); \
    CHECK(near(hand.f, imp.f));                             \
  } while (0)
  SAME_INT(layers);
  SAME_INT(max_context);
  SAME_INT(mtp_modules);
  SAME_NUM(active_params);
  SAME_NUM(total_params);
  SAME_NUM(replicated_params);
  SAME_NUM(weight_bytes_per_param);
  SAME_NUM(expert_bytes_per_param());
  SAME_INT(weight_shards);
  SAME_INT(prefill_ep_gpus);
  SAME_INT(decode_ep_gpus);
  SAME_NUM(main_kv_bytes_per_token_layer);
  SAME_NUM(indexer_kv_bytes_per_token_layer);
  SAME_INT(indexer_keys_in_cache);
  SAME_INT(attention);
  SAME_INT(heads);
  SAME_NUM(qk_head_dim);
  SAME_NUM(v_head_dim);
  SAME_INT(prefill_mha);
  SAME_NUM(prefill_qk_head_dim);
  SAME_NUM(prefill_v_head_dim);
  SAME_NUM(kv_up_params);
  SAME_INT(sparse_topk);
  SAME_INT(indexer_heads);
  SAME_NUM(indexer_head_dim);
  SAME_INT(sliding_window);
  SAME_INT(sliding_layers);
  SAME_INT(moe_layers);
  SAME_INT(routed_experts);
  SAME_INT(active_experts);
  SAME_NUM(expert_params);
  SAME_NUM(hidden);
  SAME_INT(max_nodes_per_token);
  SAME_INT(expert_groups);
  SAME_NUM(dispatch_bytes_per_value);
  SAME_NUM(combine_bytes_per_value);
  SAME_INT(gemm_precision);
  SAME_NUM(hbm_reserve_bytes);
#undef SAME_INT
#undef SAME_NUM
}

TEST_CASE("Import: DeepSeek-V3's public config -> models/llm/dsv3.json field by field", "[unit]") {
  check_same(testing::real_model("dsv3"), imported("deepseek-v3.json", "bf16", 32, 144));
}

TEST_CASE("Import: DeepSeek-V3.2's public config -> models/llm/ds660b.json field by field", "[unit]") {
  check_same(testing::real_model("ds660b"), imported("deepseek-v3.2.json", "fp8", 16, 32));
}

TEST_CASE("Import: Qwen2.5-32B's public config -> models/llm/qwen32b.json field by field", "[unit]") {
  check_same(testing::real_model("qwen32b"), imported("qwen2.5-32b.json", "bf16", 1, 1));
}

TEST_CASE("Import: the check catches a hand file that differs (the model card's 37B for V3)", "[unit]") {
  config::ModelSpec card = testing::real_model("dsv3");
  card.active_params = 37e9;  // what dsv3.json held before the recount
  const config::ModelSpec imp = imported("deepseek-v3.json", "bf16", 32, 144);
  CHECK(std::abs(card.active_params - imp.active_params) > 1e-4 * imp.active_params);
  CHECK(imp.active_params == 36625618432);
}

}  // namespace
}  // namespace sim::hf
