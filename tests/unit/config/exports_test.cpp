// Every function that the headers of sim/config/ export, called as a program outside the library calls it:
// through the header alone, with one valid input and one invalid input each. A public function that calls
// itself, or resolves to a different overload than the one its header names, fails here whatever the build
// batches together (a unity build once hid an engine loader that recursed until the stack ran out).
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config_fixtures.h"
#include "sim/config/de_buffer.h"
#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/json_util.h"
#include "sim/config/model_spec.h"
#include "sim/config/scenario.h"
#include "sim/config/units.h"

using Catch::Matchers::Contains;
using sim::config::testing::data_file;
using sim::config::testing::error_of;
using sim::config::testing::ScratchDir;
namespace cfg = sim::config;
using sim::StatusOr;

namespace {

// An engine document with a value in every section the loaders read, each different from its default.
const char* kExportsEngine = R"({
  "name": "exported",
  "kernels": {"gemm": 0.5, "prefill_efficiency": 0.8},
  "exchange": {"overlap": "none",
               "latency": {"ep_gpus": [8, 32], "decode_dispatch_s": [1e-4, 3e-4], "decode_combine_s": [1e-4, 3e-4],
                           "prefill_dispatch_s": [2e-4, 4e-4], "prefill_combine_s": [2e-4, 4e-4]}},
  "decode": {"mtp": {"draft_tokens": 2, "acceptance": 0.5}},
  "experts": {"balance": "no_balancer", "no_balancer": {"ep_gpus": [2, 8], "balancedness": [0.8, 0.5]}}
})";

std::string read_all(const std::string& path) {
  StatusOr<std::string> t = cfg::read_text_file(path, "a test file");
  REQUIRE(t);
  return *t;
}

}  // namespace

TEST_CASE(
    "Config exports: engine_from_json on a document -> the fields it holds, and an error naming the key") {
  const nlohmann::json doc = nlohmann::json::parse(kExportsEngine);
  StatusOr<cfg::EngineSpec> e = cfg::engine_from_json(doc, "doc.json");
  REQUIRE(e);
  CHECK(e->name == "exported");
  CHECK(e->k_gemm == 0.5);
  CHECK(e->k_prefill_efficiency == 0.8);
  CHECK(e->ep_overlap == cfg::EpOverlap::kNone);
  CHECK(e->ep_latency.ep_gpus == std::vector<int>{8, 32});
  CHECK(e->mtp_draft_tokens == 2);
  // The same text through the two other doors gives the same spec.
  ScratchDir dir;
  StatusOr<cfg::EngineSpec> parsed = cfg::parse_engine(kExportsEngine, "doc.json");
  StatusOr<cfg::EngineSpec> loaded = cfg::load_engine(dir.write("doc.json", kExportsEngine));
  REQUIRE(parsed);
  REQUIRE(loaded);
  CHECK(parsed->k_gemm == e->k_gemm);
  CHECK(loaded->mtp_acceptance == e->mtp_acceptance);
  CHECK(loaded->expert_balance == cfg::ExpertBalance::kNoBalancer);

  // An empty document is a valid engine of defaults, named after the name's stem.
  StatusOr<cfg::EngineSpec> empty = cfg::engine_from_json(nlohmann::json::object(), "x");
  REQUIRE(empty);
  CHECK(empty->name == "x");
  CHECK(empty->ep_overlap == cfg::EpOverlap::kTwoMicroBatches);

  nlohmann::json bad = doc;
  bad["kernels"]["gemm"] = 1.5;
  CHECK_THAT(error_of(cfg::engine_from_json(bad, "bad.json")),
             Contains("bad.json") && Contains("kernels.gemm"));
  CHECK_THAT(error_of(cfg::engine_from_json(nlohmann::json{{"kernel", 1}}, "typo.json")), Contains("kernel"));
  CHECK_THAT(error_of(cfg::parse_engine("{", "broken.json")), Contains("broken.json"));
  CHECK_THAT(error_of(cfg::load_engine(dir.path("missing.json"))), Contains("missing.json"));
}

TEST_CASE("Config exports: the engine's tables and MTP -> values computed by hand") {
  StatusOr<cfg::EngineSpec> e = cfg::parse_engine(kExportsEngine, "doc.json");
  REQUIRE(e);
  // Two draft tokens at acceptance 0.5: 1 + 0.5 + 0.25.
  CHECK(e->tokens_per_step() == Approx(1.75));
  CHECK(e->queries_per_step() == 3);
  // Halfway in log2 between EP 2 (0.8) and EP 8 (0.5) is EP 4: balancedness 0.65, imbalance 1/0.65.
  CHECK(cfg::expert_imbalance(*e, 4) == Approx(1 / 0.65));
  CHECK(cfg::expert_imbalance(*e, 1) == 1);   // one GPU has no one to wait for
  CHECK(cfg::expert_imbalance(*e, 64) == 2);  // clamped at the last point: 1/0.5
  CHECK(cfg::log2_interpolate({8, 32}, {1.0, 3.0}, 16, -1) == Approx(2.0));
  CHECK(cfg::log2_interpolate({}, {}, 16, -1) == -1);  // an empty table gives `empty`
  CHECK(std::string(cfg::name(cfg::EpOverlap::kNone)) == "none");
  CHECK(std::string(cfg::name(cfg::EpOverlap::kTwoMicroBatches)) == "two_micro_batches");
  CHECK(std::string(cfg::name(cfg::ExpertBalance::kNoBalancer)) == "no_balancer");
  CHECK(std::string(cfg::name(cfg::ExpertBalance::kBalancer)) == "balancer");
  CHECK(std::string(cfg::name(cfg::DeBuffer::kHbm)) == "hbm");
  CHECK(std::string(cfg::name(cfg::DeBuffer::kDram)) == "dram");
}

TEST_CASE(
    "Config exports: hardware and model loaders -> the file's values, and errors naming file and field") {
  const std::string hw_text = read_all(data_file("tiny-hw.json"));
  StatusOr<cfg::HardwareSpec> hw = cfg::parse_hardware(hw_text, "tiny-hw.json");
  StatusOr<cfg::HardwareSpec> hw_file = cfg::load_hardware(data_file("tiny-hw.json"));
  REQUIRE(hw);
  REQUIRE(hw_file);
  CHECK(hw->gpus_per_node == 2);
  CHECK(hw->s() == Approx(0.5));              // 25 GB/s SNIC over a 50 GB/s CNIC
  CHECK(hw->bf16_flops() == Approx(0.5e15));  // no BF16 peak given: half the 1e15 FP8 peak
  CHECK(hw_file->snic_bw_Bps == hw->snic_bw_Bps);
  nlohmann::json bad_hw = nlohmann::json::parse(hw_text);
  bad_hw["gpus_per_node"] = 0;
  CHECK_THAT(error_of(cfg::parse_hardware(bad_hw.dump(), "hw.json")),
             Contains("hw.json") && Contains("gpus_per_node"));
  CHECK_THAT(error_of(cfg::load_hardware(data_file("absent-hw.json"))), Contains("absent-hw.json"));

  const std::string model_text = read_all(data_file("tiny-model.json"));
  StatusOr<cfg::ModelSpec> m = cfg::parse_model(model_text, "tiny-model.json");
  StatusOr<cfg::ModelSpec> m_file = cfg::load_model(data_file("tiny-model.json"));
  REQUIRE(m);
  REQUIRE(m_file);
  CHECK(m->layers == 4);
  CHECK(m_file->active_params == 1e9);
  nlohmann::json bad_model = nlohmann::json::parse(model_text);
  bad_model["kv"].erase("bytes_per_token_layer");
  CHECK_THAT(error_of(cfg::parse_model(bad_model.dump(), "m.json")),
             Contains("m.json") && Contains("kv.bytes_per_token_layer"));
  CHECK_THAT(error_of(cfg::load_model(data_file("absent-model.json"))), Contains("absent-model.json"));
}

TEST_CASE("Config exports: scenario loaders, units and the cost per node hour -> by hand") {
  const std::string text = read_all(data_file("minimal.json"));
  StatusOr<cfg::ScenarioConfig> sc = cfg::parse_scenario(text, data_file("minimal.json"), {});
  StatusOr<cfg::ScenarioConfig> sc_file = cfg::load_scenario(data_file("minimal.json"), {"seed=7"});
  REQUIRE(sc);
  REQUIRE(sc_file);
  CHECK(sc_file->seed == 7);
  CHECK(sc->cluster.prefill_nodes == 2);
  CHECK_FALSE(cfg::mean_cost_per_node_hour(*sc));  // the tiny node file gives no price

  // Units: the tiny model is held whole by every GPU, so a unit is one GPU.
  CHECK(sc->cluster.prefill_ep_gpus == 1);
  CHECK(cfg::unit_gpus(*sc, cfg::UnitRole::kDecode) == 1);
  CHECK(cfg::unit_gpus(0, 12) == 12);  // 0 = one unit spanning the role
  CHECK(cfg::splits(4, 2, 4));         // 8 GPUs into units of 4
  CHECK_FALSE(cfg::splits(4, 2, 3));   // 6 GPUs do not split into units of 4
  CHECK(cfg::unit_nodes(16, 8) == 2);
  CHECK(cfg::unit_nodes(4, 8) == 1);
  CHECK(std::string(cfg::name(cfg::UnitRole::kPrefill)) == "prefill");
  CHECK(&cfg::role_hardware(*sc, cfg::UnitRole::kDecode) == &sc->decode_hardware);
  CHECK(cfg::role_hardware_file(*sc, cfg::UnitRole::kPrefill) == sc->prefill_hardware_file);
  CHECK(cfg::check_units(*sc).is_ok());
  cfg::ScenarioConfig unresolved = *sc;
  unresolved.cluster.decode_ep_gpus = -1;
  cfg::resolve_units(unresolved);
  CHECK(unresolved.cluster.decode_ep_gpus == 1);
  unresolved.cluster.decode_ep_gpus = 2;  // not 1 for a model every GPU holds whole
  CHECK_THAT(cfg::check_units(unresolved).message(), Contains("cluster.decode_ep_gpus"));

  // Mixed hardware, priced: 2 prefill nodes at 10 and 4 decode nodes at 4 average (20 + 16) / 6 = 6.
  ScratchDir dir;
  nlohmann::json hw = nlohmann::json::parse(read_all(data_file("tiny-hw.json")));
  hw["cost"] = {{"per_node_hour", 10}};
  dir.write("p.json", hw.dump());
  hw["cost"] = {{"per_node_hour", 4}};
  hw["name"] = "tiny-hw-d";
  dir.write("d.json", hw.dump());
  dir.write("m.json", read_all(data_file("tiny-model.json")));
  const std::string mixed = dir.write(
      "s.json",
      R"({"hardware": "p.json", "hardware_prefill": "p.json", "hardware_decode": "d.json", "model": "m.json"})");
  StatusOr<cfg::ScenarioConfig> priced = cfg::load_scenario(mixed, {});
  INFO(error_of(priced));
  REQUIRE(priced);
  REQUIRE(cfg::mean_cost_per_node_hour(*priced));
  CHECK(*cfg::mean_cost_per_node_hour(*priced) == Approx(6.0));

  CHECK_THAT(
      error_of(cfg::parse_scenario(R"({"hardware": "tiny-hw.json", "model": "tiny-model.json", "sed": 1})",
                                   data_file("typo.json"), {})),
      Contains("typo.json") && Contains("sed"));
  CHECK_THAT(error_of(cfg::load_scenario(data_file("minimal.json"), {"cluster.prefill_nodes=-2"})),
             Contains("--set cluster.prefill_nodes=-2"));
}

TEST_CASE("Config exports: the JSON helpers -> values and errors named by file and path") {
  StatusOr<nlohmann::json> j = cfg::parse_json_object(R"({"a": {"b": [1, 2.5]}, "notes": "n"})", "j.json");
  REQUIRE(j);
  REQUIRE(cfg::at_path(*j, "a.b") != nullptr);
  CHECK(cfg::at_path(*j, "a.c") == nullptr);
  CHECK_THAT(error_of(cfg::parse_json_object("[1, 2]", "arr.json")), Contains("arr.json"));
  CHECK_THAT(error_of(cfg::parse_json_object("{\"a\": }", "syntax.json")), Contains("syntax.json"));

  cfg::JsonReader top(*j, "j.json", "");
  cfg::read_notes(top);
  top.object("a", [](cfg::JsonReader& a) {
    CHECK(cfg::read_numbers(a, "b", 0, 10, "small numbers") == std::vector<double>{1, 2.5});
  });
  CHECK(top.finish().is_ok());
  cfg::JsonReader strict(*j, "j.json", "");
  strict.object("a", [](cfg::JsonReader& a) { cfg::read_numbers(a, "b", 0, 2, "numbers <= 2"); });
  CHECK_THAT(strict.finish().message(), Contains("j.json") && Contains("a.b") && Contains("numbers <= 2"));

  nlohmann::json doc = {{"layers", 4}, {"sources", {{"layers", "the config"}}}};
  std::map<std::string, std::string> sources;
  cfg::JsonReader with_sources(doc, "s.json", "");
  with_sources.integer("layers", std::nullopt, 1);
  cfg::read_sources(with_sources, doc, sources);
  CHECK(with_sources.finish().is_ok());
  CHECK(sources.at("layers") == "the config");
  doc["sources"] = {{"layer", "a typo"}};
  cfg::JsonReader typo_sources(doc, "s.json", "");
  typo_sources.integer("layers", std::nullopt, 1);
  cfg::read_sources(typo_sources, doc, sources);
  CHECK_THAT(typo_sources.finish().message(), Contains("sources") && Contains("layer"));

  CHECK(cfg::show_value(nlohmann::json("x")) == "\"x\"");
  CHECK(cfg::show_value(nlohmann::json(std::string(100, 'y'))).size() < 70);  // cut after 57 characters

  nlohmann::json root = nlohmann::json::object();
  CHECK(cfg::apply_override(root, "cluster.prefill_nodes=3").is_ok());
  CHECK(root["cluster"]["prefill_nodes"] == 3);
  CHECK(cfg::apply_override(root, "policy.name=plain text").is_ok());
  CHECK(root["policy"]["name"] == "plain text");
  CHECK_THAT(cfg::apply_override(root, "no-equals-sign").message(), Contains("expected key.path=value"));
  CHECK_THAT(cfg::apply_override(root, "cluster..x=1").message(), Contains("empty component"));

  const sim::Status field_error =
      sim::Status::error("f.json: cluster.prefill_nodes: expected an integer >= 1");
  CHECK_THAT(cfg::attribute_to_override(field_error, "f.json", {"cluster.prefill_nodes=0"}).message(),
             Contains("--set cluster.prefill_nodes=0"));
  CHECK(cfg::attribute_to_override(field_error, "f.json", {"seed=2"}).message() == field_error.message());

  ScratchDir dir;
  const std::string path = dir.write("ok.json", R"({"k": 1})");
  StatusOr<nlohmann::json> read = cfg::read_json_file(path);
  REQUIRE(read);
  CHECK((*read)["k"] == 1);
  CHECK_THAT(error_of(cfg::read_json_file(dir.dir())), Contains("directory"));
  CHECK_THAT(error_of(cfg::read_text_file(path, "a trace", 3)), Contains(path));  // 8 bytes > the 3 allowed
}
