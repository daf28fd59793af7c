// The engine file (sim/config/engine.h): loading, its checks, and the quantities it derives (tokens per step,
// expert imbalance).
#include "sim/config/engine.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/unit/config/config_fixtures.h"

using Catch::Matchers::Contains;
using sim::config::EngineSpec;
using sim::config::ExpertBalance;
using sim::config::parse_engine;
using sim::config::testing::error_of;

namespace {

sim::StatusOr<EngineSpec> parse_engine_text(const std::string& text) {
  return parse_engine(text, "e.json");
}

}  // namespace

TEST_CASE("Engine: empty object -> the struct's defaults but two micro-batches, name = the file's stem",
          "[unit]") {
  auto e = parse_engine_text("{}");
  REQUIRE(error_of(e) == "");
  const EngineSpec def;
  CHECK(e->name == "e");
  CHECK(e->k_prefill_attention_mqa == def.k_prefill_attention_mqa);
  CHECK(e->k_prefill_attention_mha == def.k_prefill_attention_mha);
  CHECK(e->k_decode_attention_dense == def.k_decode_attention_dense);
  CHECK(e->k_decode_attention_sparse == def.k_decode_attention_sparse);
  CHECK(e->k_gemm == def.k_gemm);
  CHECK(e->k_decode_experts == 0);  // = the gemm rate
  CHECK(e->k_prefill_efficiency == 1);
  CHECK(e->prefill_layer_overhead_s == 0);
  CHECK(e->decode_layer_overhead_s == 0);
  // A file without exchange.overlap overlaps as DeepSeek's published system does (the struct's own default,
  // ideal, is for hand-built specs).
  CHECK(e->ep_overlap == sim::config::EpOverlap::kTwoMicroBatches);
  CHECK(def.ep_overlap == sim::config::EpOverlap::kIdeal);
  CHECK(e->ep_latency.ep_gpus.empty());
  CHECK(e->prefill_exchange.ep_gpus.empty());
  CHECK(e->prefill_comm_sms == 0);
  CHECK(e->decode_exchange_sm_s_per_token == 0);
  CHECK(e->max_pass_tokens == 0);
  CHECK(e->prefill_cpu_s == 0);
  CHECK(e->decode_cpu_s == 0);
  CHECK(e->expert_balance == ExpertBalance::kPerfect);
  CHECK(e->mtp_draft_tokens == 0);
  CHECK(e->tokens_per_step() == 1);
  CHECK(e->queries_per_step() == 1);
  CHECK(e->storage_efficiency == 1);
  CHECK(e->storage_request_overhead_s == 0);
}

TEST_CASE("Engine: every field given -> each lands in its member", "[unit]") {
  auto e = parse_engine_text(R"({"name": "x", "notes": "n", "sources": {"kernels.gemm": "a README"},
    "kernels": {"prefill_attention_mqa": 0.1, "prefill_attention_mha": 0.15, "decode_attention_dense": 0.2,
                "decode_attention_sparse": 0.22, "indexer": 0.25, "gemm": 0.3, "decode_experts": 0.35,
                "gemm_hbm": 0.4, "attention_hbm": 0.5, "prefill_efficiency": 0.6,
                "prefill_layer_overhead_s": 1e-5, "decode_layer_overhead_s": 2e-5, "prefill_experts": 0.45,
                "prefill_token_s": 2e-7, "decode_token_s": 3e-7},
    "exchange": {"overlap": "none", "prefill_comm_sms": 24, "decode_sm_s_per_token": 3e-8,
                 "latency": {"ep_gpus": [8, 16], "decode_dispatch_s": [1e-5, 2e-5], "decode_combine_s": [3e-5, 4e-5],
                             "prefill_dispatch_s": [5e-5, 6e-5], "prefill_combine_s": [7e-5, 8e-5]},
                 "prefill_rate": {"ep_gpus": [16, 32], "dispatch_Bps": [43e9, 44e9], "combine_Bps": [43e9, 47e9]}},
    "prefill": {"max_pass_tokens": 16384, "cpu_s": 0.001},
    "decode": {"cpu_s": 0.002, "mtp": {"draft_tokens": 2, "acceptance": 0.5, "module_layers": 1}},
    "experts": {"balance": "balancer", "balancer": {"ep_gpus": [8, 32], "balancedness": [0.9, 0.8]},
                "no_balancer": {"ep_gpus": [8], "balancedness": [0.5]}},
    "storage": {"efficiency": 0.8, "request_overhead_s": 3e-5}})");
  REQUIRE(error_of(e) == "");
  CHECK(e->name == "x");
  CHECK(e->sources.at("kernels.gemm") == "a README");
  CHECK(e->k_prefill_attention_mqa == 0.1);
  CHECK(e->k_prefill_attention_mha == 0.15);
  CHECK(e->k_decode_attention_dense == 0.2);
  CHECK(e->k_decode_attention_sparse == 0.22);
  CHECK(e->k_indexer == 0.25);
  CHECK(e->k_gemm == 0.3);
  CHECK(e->k_decode_experts == 0.35);
  CHECK(e->k_gemm_hbm == 0.4);
  CHECK(e->k_attention_hbm == 0.5);
  CHECK(e->k_prefill_efficiency == 0.6);
  CHECK(e->prefill_layer_overhead_s == 1e-5);
  CHECK(e->decode_layer_overhead_s == 2e-5);
  CHECK(e->k_prefill_experts == 0.45);
  CHECK(e->prefill_token_s == 2e-7);
  CHECK(e->decode_token_s == 3e-7);
  CHECK(e->ep_overlap == sim::config::EpOverlap::kNone);
  CHECK(e->prefill_comm_sms == 24);
  CHECK(e->decode_exchange_sm_s_per_token == 3e-8);
  CHECK(e->ep_latency.ep_gpus == std::vector<int>{8, 16});
  CHECK(e->ep_latency.prefill_combine_s == std::vector<double>{7e-5, 8e-5});
  CHECK(e->prefill_exchange.ep_gpus == std::vector<int>{16, 32});
  CHECK(e->prefill_exchange.combine_Bps == std::vector<double>{43e9, 47e9});
  CHECK(e->max_pass_tokens == 16384);
  CHECK(e->prefill_cpu_s == 0.001);
  CHECK(e->decode_cpu_s == 0.002);
  CHECK(e->mtp_draft_tokens == 2);
  CHECK(e->mtp_acceptance == 0.5);
  CHECK(e->mtp_module_layers == 1);
  CHECK(e->expert_balance == ExpertBalance::kBalancer);
  CHECK(e->balanced.balancedness == std::vector<double>{0.9, 0.8});
  CHECK(e->unbalanced.ep_gpus == std::vector<int>{8});
  CHECK(e->storage_efficiency == 0.8);
  CHECK(e->storage_request_overhead_s == 3e-5);
}

TEST_CASE("Engine: MTP -> tokens per step 1 + a + a^2 + ..., queries 1 + drafts", "[unit]") {
  EngineSpec e;
  e.mtp_draft_tokens = 1;
  e.mtp_acceptance = 0.875;
  CHECK(e.tokens_per_step() == 1.875);
  CHECK(e.queries_per_step() == 2);
  // A second draft token counts only when the first was accepted: 1 + 0.5 + 0.25.
  e.mtp_draft_tokens = 2;
  e.mtp_acceptance = 0.5;
  CHECK(e.tokens_per_step() == 1.75);
  CHECK(e.queries_per_step() == 3);
  // Drafts that are never accepted cost queries and give nothing.
  e.mtp_acceptance = 0;
  CHECK(e.tokens_per_step() == 1);
}

TEST_CASE("Engine: expert imbalance -> 1 / balancedness of the balance in use, log2-interpolated, clamped",
          "[unit]") {
  EngineSpec e;
  e.balanced = {{8, 32}, {0.9, 0.8}};
  e.unbalanced = {{8, 32}, {0.6, 0.5}};
  // Perfect balance and a group of one GPU: 1.
  CHECK(sim::config::expert_imbalance(e, 32) == 1);
  e.expert_balance = ExpertBalance::kBalancer;
  CHECK(sim::config::expert_imbalance(e, 1) == 1);
  CHECK(sim::config::expert_imbalance(e, 8) == Approx(1 / 0.9).epsilon(1e-12));
  CHECK(sim::config::expert_imbalance(e, 32) == Approx(1 / 0.8).epsilon(1e-12));
  // EP16 is halfway between 8 and 32 in log2: 0.85 (a linear reading would give 0.8667).
  CHECK(sim::config::expert_imbalance(e, 16) == Approx(1 / 0.85).epsilon(1e-12));
  CHECK(sim::config::expert_imbalance(e, 4) == Approx(1 / 0.9).epsilon(1e-12));
  CHECK(sim::config::expert_imbalance(e, 144) == Approx(1 / 0.8).epsilon(1e-12));
  e.expert_balance = ExpertBalance::kNoBalancer;
  CHECK(sim::config::expert_imbalance(e, 16) == Approx(1 / 0.55).epsilon(1e-12));
}

TEST_CASE("Engine: bad values -> rejected with the file and the JSON path", "[unit]") {
  const char* cases[][2] = {
      {R"({"kernels": {"gemm": 0}})", "kernels.gemm: expected a number >= 0.01 and <= 1, got 0"},
      {R"({"kernels": {"gemm": 1.5}})", "kernels.gemm: expected a number >= 0.01 and <= 1, got 1.5"},
      // Below 1% of a peak: a run of that engine would never end (models/engine/README.md).
      {R"({"kernels": {"gemm": 1e-15}})", "kernels.gemm: expected a number >= 0.01 and <= 1, got 1e-15"},
      {R"({"kernels": {"decode_experts": 0.001}})",
       "kernels.decode_experts: expected 0 or a number >= 0.01 and <= 1, got 0.001"},
      {R"({"kernels": {"prefill_attention": 0.3}})", "kernels.prefill_attention: unknown key"},
      {R"({"kernels": {"decode_experts": 2}})", "kernels.decode_experts: expected a number >= 0 and <= 1"},
      {R"({"kernels": {"prefill_layer_overhead_s": 2}})",
       "kernels.prefill_layer_overhead_s: expected a number >= 0 and <= 1, got 2"},
      {R"({"kernels": {"decode_token_s": 0.001}})",
       "kernels.decode_token_s: expected a number >= 0 and <= 0.0001, got 0.001"},
      {R"({"exchange": {"overlap": "three"}})", "exchange.overlap: expected one of"},
      {R"({"exchange": {"prefill_comm_sms": -1}})", "exchange.prefill_comm_sms: expected a number >= 0"},
      {R"({"exchange": {"latency": {"ep_gpus": [16, 8]}}})",
       "exchange.latency.ep_gpus: expected an array of whole EP sizes >= 2 in increasing order"},
      {R"({"exchange": {"latency": {"ep_gpus": [8, 16], "decode_dispatch_s": [1e-5, 40]}}})",
       "exchange.latency.decode_dispatch_s: expected an array of latencies in seconds, >= 0 and <= 0.01"},
      {R"({"exchange": {"latency": {"ep_gpus": [8, 16], "decode_dispatch_s": [1e-5]}}})",
       "exchange.latency.decode_dispatch_s: expected 2 values, one per ep_gpus"},
      {R"({"exchange": {"prefill_rate": {"ep_gpus": [16], "dispatch_Bps": [0], "combine_Bps": [1e9]}}})",
       "exchange.prefill_rate.dispatch_Bps: expected an array of bytes/s >= 1e9 and <= 1e13"},
      {R"({"prefill": {"max_pass_tokens": -1}})", "prefill.max_pass_tokens: expected a number >= 0"},
      {R"({"decode": {"cpu_s": 5}})", "decode.cpu_s: expected a number >= 0 and <= 1, got 5"},
      {R"({"decode": {"mtp": {"acceptance": 1.2}}})",
       "decode.mtp.acceptance: expected a number >= 0 and <= 1"},
      {R"({"decode": {"mtp": {"draft_tokens": 1.5}}})", "decode.mtp.draft_tokens: expected an integer"},
      {R"({"experts": {"balance": "balancer"}})",
       "experts.balancer: expected a balancedness table (experts.balance is \"balancer\")"},
      {R"({"experts": {"no_balancer": {"ep_gpus": [8], "balancedness": [0]}}})",
       "experts.no_balancer.balancedness: expected an array of numbers in [0.01, 1]"},
      {R"({"storage": {"efficiency": 0}})", "storage.efficiency: expected a number >= 0.01 and <= 1, got 0"},
      {R"({"storage": {"request_overhead_s": 45}})",
       "storage.request_overhead_s: expected a number >= 0 and <= 1, got 45"},
      {R"({"sources": {"kernels.gem": "x"}})",
       "sources.kernels.gem: expected the path of a field of this file"},
      {R"({"mtp": {}})", "mtp: unknown key"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    CHECK_THAT(error_of(parse_engine_text(c[0])), Contains(std::string("e.json: ") + c[1]));
  }
}

namespace {

nlohmann::json project_json(const std::string& relative) {
  std::ifstream in(std::string(DPSIM_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// Every leaf of `doc` (a value that is not an object) by its dotted path, documentation apart.
void leaves(const nlohmann::json& doc, const std::string& prefix, std::vector<std::string>& out) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (prefix.empty() && (it.key() == "name" || it.key() == "notes" || it.key() == "sources")) continue;
    if (it->is_object())
      leaves(*it, path, out);
    else
      out.push_back(path);
  }
}

}  // namespace

TEST_CASE("Engine files: every value has a source, and the paper's engine fits exactly the calibration's two",
          "[unit]") {
  // The project's rule (README.md, "Calibration and fidelity"): at most two values are fitted, on
  // the one calibration point, and every other value has a public source or is a documented default. A
  // source that says CALIBRATION marks a fitted value; scenarios/paper/calibration.json names what
  // `dpsim calibrate` fits: the two must be the same set, and the production engine fits nothing.
  std::set<std::string> fitted_by_spec;
  const nlohmann::json spec = project_json("scenarios/paper/calibration.json");
  for (const auto& p : spec.at("parameters")) fitted_by_spec.insert(p.at("key").get<std::string>());
  REQUIRE(fitted_by_spec ==
          std::set<std::string>{"kernels.prefill_efficiency", "storage.request_overhead_s"});
  // ant-h20-sglang is a validation point's engine (scenarios/validation/): it fits nothing either.
  for (const char* name : {"dualpath-paper", "deepseek-v3-production", "ant-h20-sglang"}) {
    INFO(name);
    const nlohmann::json doc = project_json(std::string("models/engine/") + name + ".json");
    std::vector<std::string> paths;
    leaves(doc, "", paths);
    CHECK(paths.size() > 30);  // the sections are there to be checked
    std::string missing;
    std::set<std::string> fitted;
    for (const auto& p : paths) {
      if (!doc.at("sources").contains(p)) {
        missing += " " + p;
        continue;
      }
      if (doc.at("sources").at(p).get<std::string>().find("CALIBRATION") != std::string::npos)
        fitted.insert(p);
    }
    INFO("no source for:" << missing);
    CHECK(missing.empty());
    if (std::string(name) == "dualpath-paper") {
      CHECK(fitted == fitted_by_spec);
    } else {
      CHECK(fitted.empty());
      CHECK(doc.at("kernels").at("prefill_efficiency") == 1);
    }
    // Both load.
    auto e = sim::config::load_engine(std::string(DPSIM_SOURCE_DIR) + "/models/engine/" + name + ".json");
    CHECK(error_of(e) == "");
  }
}
