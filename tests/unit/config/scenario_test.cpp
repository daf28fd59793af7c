#include "sim/config/scenario.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "sim/policy/names.h"
#include "tests/unit/config/config_fixtures.h"

using Catch::Matchers::Contains;
using sim::config::load_scenario;
using sim::config::ScenarioConfig;
using sim::config::testing::data_file;
using sim::config::testing::error_of;
using sim::config::testing::ScratchDir;

namespace {

// A scenario in a scratch directory whose hardware and model are the fixtures, by absolute path, plus
// `extra` (a JSON object body without braces, e.g. R"("cluster": {"prefill_nodes": 3})").
std::string scenario_text(const std::string& extra = "") {
  std::string text = "{\"hardware\": \"" + data_file("tiny-hw.json") + "\", \"model\": \"" +
                     data_file("tiny-model.json") + "\"";
  if (!extra.empty()) text += ", " + extra;
  return text + "}";
}

// Loads scenario_text(extra) written as <dir>/s.json, with `overrides`.
sim::StatusOr<ScenarioConfig> load_with(const ScratchDir& dir, const std::string& extra,
                                        const std::vector<std::string>& overrides = {}) {
  return load_scenario(dir.write("s.json", scenario_text(extra)), overrides);
}

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

TEST_CASE("Scenario: only hardware and model given -> every default of the structs", "[unit]") {
  auto sc = load_scenario(data_file("minimal.json"), {});
  REQUIRE(error_of(sc) == "");
  const ScenarioConfig def;
  CHECK(sc->file == data_file("minimal.json"));
  CHECK(sc->name == "minimal");
  CHECK(sc->description.empty());
  CHECK(sc->cluster.prefill_nodes == def.cluster.prefill_nodes);
  CHECK(sc->cluster.decode_nodes == def.cluster.decode_nodes);
  CHECK(sc->cluster.dram_buffer_bytes == def.cluster.dram_buffer_bytes);
  CHECK(sc->cluster.de_buffer == sim::config::DeBuffer::kDram);
  CHECK(sc->workload.mode == def.workload.mode);
  CHECK(sc->workload.trace.empty());
  CHECK(sc->workload.generator.dataset == def.workload.generator.dataset);
  CHECK(sc->workload.generator.trajectories == def.workload.generator.trajectories);
  CHECK(sc->workload.generator.seed == def.workload.generator.seed);
  CHECK(sc->workload.agents == def.workload.agents);
  CHECK(sc->workload.max_turns == def.workload.max_turns);
  CHECK(sc->workload.aps == def.workload.aps);
  CHECK(sc->policy.read_path == def.policy.read_path);
  CHECK(sc->policy.scheduler == def.policy.scheduler);
  CHECK(sc->policy.layerwise == def.policy.layerwise);
  CHECK(sc->policy.batching == def.policy.batching);
  CHECK(sc->policy.compute_quota_s == def.policy.compute_quota_s);
  CHECK(sc->policy.fetch_period_s == def.policy.fetch_period_s);
  CHECK(sc->policy.persist_block_tokens == def.policy.persist_block_tokens);
  CHECK(sc->policy.persist_append == def.policy.persist_append);
  CHECK(sc->policy.pd_guard == "off");
  CHECK(sc->sim.layer_group == def.sim.layer_group);
  CHECK(sc->sim.read_depth == def.sim.read_depth);
  CHECK(sc->sim.time_limit_s == def.sim.time_limit_s);
  CHECK(sc->sim.progress == def.sim.progress);
  CHECK(sc->outputs.results == def.outputs.results);
  CHECK(sc->outputs.timeseries_interval_s == def.outputs.timeseries_interval_s);
  CHECK(sc->outputs.window_s == def.outputs.window_s);
  CHECK(sc->seed == def.seed);
  // The referenced files are resolved next to the scenario and loaded.
  CHECK(sc->hardware_file == data_file("tiny-hw.json"));
  CHECK(sc->model_file == data_file("tiny-model.json"));
  CHECK(sc->prefill_hardware.gpus_per_node == 2);
  CHECK(sc->model.file == data_file("tiny-model.json"));
}

TEST_CASE("Scenario: resolved JSON -> every field with its default, references as written", "[unit]") {
  auto sc = load_scenario(data_file("minimal.json"), {});
  REQUIRE(sc);
  const nlohmann::json& r = sc->resolved;
  std::vector<std::string> keys;
  for (auto it = r.begin(); it != r.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"cache", "cluster", "control", "description", "engine", "hardware",
                                         "model", "name", "network", "outputs", "policy", "seed", "sim",
                                         "slo", "storage", "workload"});
  CHECK(r["hardware"] == "tiny-hw.json");
  CHECK(r["engine"] == "dualpath-paper");  // the default engine, as written
  CHECK(r["model"] == "tiny-model.json");
  CHECK(r["name"] == "minimal");
  CHECK(r["cluster"]["prefill_nodes"] == 2);
  CHECK(r["cluster"]["dram_buffer_bytes"] == 80e9);
  CHECK(r["cluster"].size() == 7);
  CHECK(r["cluster"]["prefill_ep_gpus"] == 1);  // tiny-model holds the whole model per GPU: units of one GPU
  CHECK(r["cluster"]["decode_ep_gpus"] == 1);
  CHECK(r["cluster"]["de_buffer"] == "dram");
  CHECK(r["workload"]["generator"]["dataset"] == "64k");
  CHECK(r["workload"]["trace"] == "");
  CHECK(r["policy"]["read_path"] == "dualpath");
  CHECK(r["policy"]["layerwise"] == true);
  CHECK(r["sim"]["read_depth"] == 4);
  CHECK(r["network"]["qos"] == "none");
  CHECK(r["outputs"]["window_s"] == 1.0);
  CHECK(r["seed"] == 1);
  CHECK(r["policy"].size() == 15);
  CHECK(r["policy"]["quota_scope"] == "pass");
  CHECK(r["policy"]["ep_overlap"] == "engine");  // the engine file's exchange.overlap
  CHECK(r["policy"]["fixed_costs"] == true);
  CHECK(r["policy"]["pd_guard"] == "off");
  CHECK(r["policy"]["pe_group_nodes"] == 0);
  CHECK(r["sim"].size() == 5);
  CHECK(r["sim"]["persist_interval_s"] == 2.0);
  CHECK(r["workload"].size() == 12);
  CHECK(r["workload"]["aps_change"].is_null());
  CHECK(r["control"]["autoscale"]["policy"] == "off");
  CHECK(r["control"]["autoscale"].size() == 5);
  CHECK(r["workload"]["over_context"] == "error");
  CHECK(r["workload"]["append_scale"] == 1.0);
  CHECK(r["workload"]["gen_scale"] == 1.0);
  CHECK(r["slo"]["warmup_s"] == "auto");
  CHECK(r["outputs"]["requests"] == "");
  CHECK(r["storage"].size() == 2);
  CHECK(r["storage"]["capacity_bytes"] == 0.0);
  CHECK(r["storage"]["eviction"] == "lru");
  CHECK(r["cache"].size() == 2);
  CHECK(r["cache"]["dram_bytes"] == 0.0);
  CHECK(r["cache"]["eviction"] == "lru");
}

TEST_CASE("Scenario: policy.ep_overlap and policy.fixed_costs -> what the cost model reads in the engine",
          "[unit]") {
  ScratchDir dir;
  const std::string paper_hw = std::string(DPSIM_SOURCE_DIR) + "/models/hardware/hopper-8x400g.json";
  const std::string text =
      "{\"hardware\": \"" + paper_hw + "\", \"model\": \"" + data_file("tiny-model.json") + "\"}";
  const std::string file = dir.write("paper.json", text);
  // The default: the default engine (the paper's) as its file says: two micro-batches, its fixed costs.
  auto on = load_scenario(file, {});
  REQUIRE(error_of(on) == "");
  CHECK(on->engine.name == "dualpath-paper");
  CHECK(on->engine.ep_overlap == sim::config::EpOverlap::kTwoMicroBatches);
  CHECK(on->engine.ep_latency.ep_gpus.size() == 6);
  CHECK(on->engine.decode_layer_overhead_s == 23e-6);
  CHECK(on->engine.prefill_layer_overhead_s == 0);
  CHECK(on->engine.decode_token_s == 3.242e-7);
  // fixed_costs = false: the latency table and every overhead are gone; nothing else of the file changes.
  auto off = load_scenario(file, {"policy.fixed_costs=false", "policy.ep_overlap=none"});
  REQUIRE(error_of(off) == "");
  CHECK(off->engine.ep_overlap == sim::config::EpOverlap::kNone);
  CHECK(off->engine.ep_latency.ep_gpus.empty());
  CHECK(off->engine.ep_latency.decode_dispatch_s.empty());
  CHECK(off->engine.decode_layer_overhead_s == 0);
  CHECK(off->engine.prefill_layer_overhead_s == 0);
  CHECK(off->engine.decode_cpu_s == 0);
  CHECK(off->engine.decode_token_s == on->engine.decode_token_s);  // per token, not a fixed cost
  CHECK(off->engine.k_prefill_efficiency == on->engine.k_prefill_efficiency);
  CHECK(off->engine.k_indexer == on->engine.k_indexer);
  auto ideal = load_scenario(file, {"policy.ep_overlap=ideal"});
  REQUIRE(error_of(ideal) == "");
  CHECK(ideal->engine.ep_overlap == sim::config::EpOverlap::kIdeal);
}

TEST_CASE("Scenario: resolved JSON loaded again -> the same resolved JSON", "[unit]") {
  ScratchDir dir;
  auto first = load_with(dir, R"("cluster": {"decode_nodes": 7}, "policy": {"read_path": "pe"})",
                         {"sim.read_depth=9", "workload.mode=online"});
  REQUIRE(first);
  auto second = load_scenario(dir.write("again.json", first->resolved.dump(2)), {});
  REQUIRE(error_of(second) == "");
  nlohmann::json a = first->resolved, b = second->resolved;
  a.erase("name");
  b.erase("name");
  CHECK(a == b);
  CHECK(second->sim.read_depth == 9);
  CHECK(second->cluster.decode_nodes == 7);
}

TEST_CASE("Scenario: events in the resolved JSON loaded again -> the same events", "[unit]") {
  ScratchDir dir;
  // One event on every direction of a link (no "direction" given), one on a CNIC direction of one GPU.
  auto first = load_with(dir, R"("events": [
      {"kind": "link_degrade", "at_s": 10, "until_s": 20, "node": 1, "resource": "snic", "factor": 0.5},
      {"kind": "link_degrade", "at_s": 5, "until_s": 8, "node": 0, "resource": "cnic", "gpu": 1,
       "direction": "read", "factor": 0.25},
      {"kind": "role_change", "at_s": 30, "nodes": [1], "to": "decode"}],
      "cluster": {"prefill_nodes": 2},
      "workload": {"mode": "online", "aps_change": {"at_s": 60, "aps": 3}},
      "control": {"autoscale": {"policy": "slo", "interval_s": 30, "guard": false}})",
                         {});
  REQUIRE(error_of(first) == "");
  auto second = load_scenario(dir.write("again.json", first->resolved.dump(2)), {});
  REQUIRE(error_of(second) == "");
  nlohmann::json a = first->resolved, b = second->resolved;
  a.erase("name");
  b.erase("name");
  CHECK(a == b);
  REQUIRE(second->events.size() == 3);
  CHECK(second->events[0].direction.empty());
  CHECK(second->events[1].direction == "read");
  CHECK(second->events[1].gpu == 1);
  CHECK(second->events[2].kind == "role_change");
  CHECK(second->events[2].nodes == std::vector<int>{1});
  CHECK(second->events[2].to == "decode");
  CHECK(second->workload.aps_change_at_s == 60);
  CHECK(second->workload.aps_after == 3);
  CHECK(second->control.autoscale.policy == "slo");
  CHECK(second->control.autoscale.interval_s == 30);
  CHECK_FALSE(second->control.autoscale.guard);
}

TEST_CASE("Scenario: --set overrides -> applied in order, typed as JSON, later wins", "[unit]") {
  ScratchDir dir;
  auto sc = load_with(dir, R"("cluster": {"prefill_nodes": 1})",
                      {"cluster.prefill_nodes=3", "policy.read_path=pe", "policy.layerwise=false",
                       "workload.generator.dataset=32k", "seed=7", "sim.time_limit_s=1e3",
                       "description=a what-if", "cluster.prefill_nodes=5"});
  REQUIRE(error_of(sc) == "");
  CHECK(sc->cluster.prefill_nodes == 5);
  CHECK(sc->policy.read_path == "pe");
  CHECK(sc->policy.layerwise == false);
  CHECK(sc->workload.generator.dataset == "32k");
  CHECK(sc->seed == 7);
  CHECK(sc->sim.time_limit_s == 1000);
  CHECK(sc->description == "a what-if");
  CHECK(sc->resolved["cluster"]["prefill_nodes"] == 5);
}

TEST_CASE("Scenario: a bad --set value -> error names the file, the --set and the field", "[unit]") {
  ScratchDir dir;
  std::string file = dir.path("s.json");
  CHECK(error_of(load_with(dir, "", {"cluster.prefill_nodes=-2"})) ==
        file + ": --set cluster.prefill_nodes=-2: cluster.prefill_nodes: expected an integer >= 1, got -2");
  CHECK_THAT(
      error_of(load_with(dir, "", {"cluster.prefill_nodes=abc"})),
      Contains(
          "--set cluster.prefill_nodes=abc: cluster.prefill_nodes: expected an integer >= 1, got \"abc\""));
  CHECK_THAT(error_of(load_with(dir, "", {"policy.layerwise=yes"})),
             Contains("--set policy.layerwise=yes: policy.layerwise: expected true or false, got \"yes\""));
  CHECK_THAT(error_of(load_with(dir, "", {"cluster.prefil_nodes=3"})),
             Contains(file + ": --set cluster.prefil_nodes=3: cluster.prefil_nodes: unknown key"));
  CHECK_THAT(error_of(load_with(dir, "", {"cluster=5"})),
             Contains("--set cluster=5: cluster: expected an object"));
  CHECK_THAT(error_of(load_with(dir, "", {"cluster={\"decode_nodes\": 0}"})),
             Contains("--set cluster={\"decode_nodes\": 0}: cluster.decode_nodes: expected an integer >= 1"));
  CHECK_THAT(error_of(load_with(dir, "", {"noequals"})),
             Contains(file + ": --set noequals: expected key.path=value"));
  CHECK_THAT(error_of(load_with(dir, "", {"hardware=nope"})),
             Contains("--set hardware=nope: hardware: cannot open models/hardware/nope.json: no such file"));
}

TEST_CASE("Scenario: an error in the file while other fields are overridden -> not blamed on --set",
          "[unit]") {
  ScratchDir dir;
  std::string msg =
      error_of(load_with(dir, R"("cluster": {"decode_nodes": 0})", {"cluster.prefill_nodes=3"}));
  CHECK(msg == dir.path("s.json") + ": cluster.decode_nodes: expected an integer >= 1, got 0");
}

TEST_CASE("Scenario: unknown keys -> rejected with the JSON path", "[unit]") {
  ScratchDir dir;
  std::string file = dir.path("s.json");
  CHECK_THAT(error_of(load_with(dir, R"("clusters": {})")), Contains(file + ": clusters: unknown key"));
  CHECK_THAT(error_of(load_with(dir, R"("policy": {"readpath": "pe"})")),
             Contains(file + ": policy.readpath: unknown key") && Contains("read_path"));
  CHECK_THAT(error_of(load_with(dir, R"("workload": {"generator": {"size": 3}})")),
             Contains(file + ": workload.generator.size: unknown key"));
  CHECK_THAT(error_of(load_with(dir, R"("sim": {"time_limit": 5})")),
             Contains("sim.time_limit: unknown key"));
}

TEST_CASE("Scenario: wrong JSON types -> rejected with what was expected and found", "[unit]") {
  ScratchDir dir;
  const char* cases[][2] = {
      {R"("cluster": {"prefill_nodes": "2"})", "cluster.prefill_nodes: expected an integer >= 1, got \"2\""},
      {R"("cluster": {"prefill_nodes": 1.5})", "cluster.prefill_nodes: expected an integer >= 1, got 1.5"},
      {R"("workload": {"aps": "1"})", "workload.aps: expected a number > 0, got \"1\""},
      {R"("policy": {"layerwise": 1})", "policy.layerwise: expected true or false, got 1"},
      {R"("sim": [])", "sim: expected an object, got []"},
      {R"("name": 4)", "name: expected a string, got 4"},
      {R"("outputs": {"results": false})", "outputs.results: expected a string, got false"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    CHECK_THAT(error_of(load_with(dir, c[0])), Contains(dir.path("s.json") + ": " + c[1]));
  }
  CHECK_THAT(error_of(load_scenario(dir.write("t.json", R"({"hardware": 5, "model": "m"})"), {})),
             Contains("hardware: expected a string, got 5"));
}

TEST_CASE("Scenario: zero or negative where positive is required -> rejected", "[unit]") {
  ScratchDir dir;
  const char* cases[][2] = {
      {R"("cluster": {"prefill_nodes": 0})", "cluster.prefill_nodes: expected an integer >= 1, got 0"},
      {R"("cluster": {"decode_nodes": -1})", "cluster.decode_nodes: expected an integer >= 1, got -1"},
      {R"("cluster": {"dram_buffer_bytes": 0})", "cluster.dram_buffer_bytes: expected a number > 0"},
      {R"("workload": {"agents": 0})", "workload.agents: expected an integer >= 1"},
      {R"("workload": {"max_turns": -1})", "workload.max_turns: expected an integer >= 0"},
      {R"("workload": {"aps": 0})", "workload.aps: expected a number > 0"},
      {R"("workload": {"generator": {"trajectories": 0}})",
       "workload.generator.trajectories: expected an integer >= 1"},
      {R"("workload": {"generator": {"seed": -1}})", "workload.generator.seed: expected an integer >= 0"},
      {R"("policy": {"compute_quota_s": 0})", "policy.compute_quota_s: expected a number > 0"},
      {R"("policy": {"fetch_period_s": -0.1})", "policy.fetch_period_s: expected a number > 0"},
      {R"("policy": {"pe_group_nodes": -1})", "policy.pe_group_nodes: expected an integer >= 0"},
      {R"("policy": {"persist_block_tokens": 0})", "policy.persist_block_tokens: expected an integer >= 1"},
      {R"("sim": {"read_depth": 0})", "sim.read_depth: expected an integer >= 1"},
      {R"("sim": {"layer_group": -1})", "sim.layer_group: expected an integer >= 0"},
      {R"("sim": {"time_limit_s": -1})", "sim.time_limit_s: expected a number >= 0"},
      {R"("outputs": {"timeseries_interval_s": -1})",
       "outputs.timeseries_interval_s: expected a number >= 0"},
      {R"("outputs": {"window_s": 0})", "outputs.window_s: expected a number > 0"},
      {R"("seed": -3)", "seed: expected an integer >= 0, got -3"},
      {R"("workload": {"agents": 3e9})", "workload.agents: expected an integer >= 1 and <= 2147483647"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    CHECK_THAT(error_of(load_with(dir, c[0])), Contains(dir.path("s.json") + ": " + c[1]));
  }
  // Zero is a valid value where it means "none" or "automatic".
  auto sc = load_with(
      dir, R"("sim": {"layer_group": 0, "time_limit_s": 0}, "outputs": {"timeseries_interval_s": 0})");
  CHECK(error_of(sc) == "");
}

TEST_CASE("Scenario: hardware or model missing -> required-field errors", "[unit]") {
  ScratchDir dir;
  CHECK_THAT(
      error_of(load_scenario(dir.write("a.json", R"({"model": "m"})"), {})),
      Contains(dir.path("a.json") + ": hardware: expected a string, got nothing (the field is missing)"));
  CHECK_THAT(error_of(load_scenario(dir.write("b.json", R"({"hardware": "hopper-8x400g"})"), {})),
             Contains(dir.path("b.json") + ": model: expected a string, got nothing"));
  CHECK_THAT(error_of(load_scenario(dir.write("c.json", R"({"hardware": "", "model": "m"})"), {})),
             Contains(dir.path("c.json") + ": hardware: expected a hardware file path or name"));
}

TEST_CASE("Scenario: unknown policy or enum value -> error lists the valid names", "[unit]") {
  ScratchDir dir;
  CHECK_THAT(error_of(load_with(dir, R"("policy": {"read_path": "fast"})")),
             Contains("policy.read_path: expected one of " + list(sim::policy::read_path_names()) +
                      ", got \"fast\""));
  CHECK_THAT(error_of(load_with(dir, "", {"policy.scheduler=magic"})),
             Contains("--set policy.scheduler=magic: policy.scheduler: expected one of " +
                      list(sim::policy::scheduler_names())));
  CHECK_THAT(error_of(load_with(dir, R"("policy": {"batching": "lifo"})")),
             Contains("policy.batching: expected one of fifo, quota"));
  CHECK_THAT(error_of(load_with(dir, R"("policy": {"quota_scope": "batch"})")),
             Contains("policy.quota_scope: expected one of pass, layer"));
  CHECK_THAT(error_of(load_with(dir, R"("workload": {"mode": "batch"})")),
             Contains("workload.mode: expected one of offline, online"));
  CHECK_THAT(error_of(load_with(dir, R"("workload": {"generator": {"dataset": "128k"}})")),
             Contains("workload.generator.dataset: expected one of 32k, 48k, 64k"));
  // Every registered name is accepted.
  for (const auto& name : sim::policy::read_path_names())
    CHECK(load_with(dir, "", {"policy.read_path=" + name}));
  for (const auto& name : sim::policy::scheduler_names())
    CHECK(load_with(dir, "", {"policy.scheduler=" + name}));
}

TEST_CASE("Scenario: relative references -> scenario directory first, then the project root", "[unit]") {
  ScratchDir dir;
  dir.write("sub/hw/local.json", R"({"gpus_per_node": 3})");
  std::string s = dir.write("sub/s.json",
                            R"({"hardware": "hw/local.json", "model": "tests/data/config/tiny-model.json"})");
  auto sc = load_scenario(s, {});
  REQUIRE(error_of(sc) == "");
  CHECK(sc->hardware_file == dir.path("sub/hw/local.json"));
  CHECK(sc->prefill_hardware.gpus_per_node == 3);
  CHECK(std::filesystem::equivalent(sc->model_file, data_file("tiny-model.json")));
  CHECK(sc->resolved["hardware"] == "hw/local.json");
}

TEST_CASE("Scenario: a bare hardware name -> models/hardware/<name>.json", "[unit]") {
  ScratchDir dir;
  std::string s = dir.write(
      "s.json", "{\"hardware\": \"hopper-8x400g\", \"model\": \"" + data_file("tiny-model.json") + "\"}");
  auto sc = load_scenario(s, {});
  REQUIRE(error_of(sc) == "");
  CHECK(std::filesystem::equivalent(sc->hardware_file,
                                    std::string(DPSIM_SOURCE_DIR) + "/models/hardware/hopper-8x400g.json"));
  CHECK(sc->prefill_hardware.name == "hopper-8x400g");
  CHECK(sc->prefill_hardware.gpus_per_node == 8);
}

TEST_CASE("Scenario: missing referenced files -> error names the scenario, the field and the file",
          "[unit]") {
  ScratchDir dir;
  std::string file = dir.path("s.json");
  // A missing engine, model or hardware file: the names that exist follow (models/<kind>/, sorted).
  CHECK_THAT(error_of(load_scenario(dir.write("s.json", R"({"hardware": "nope", "model": "m"})"), {})),
             Catch::Matchers::StartsWith(file + ": hardware: cannot open models/hardware/nope.json: no such "
                                                "file (the hardware files of models/hardware/, by name: ") &&
                 Catch::Matchers::Contains(", hopper-4x400g, hopper-8x400g)"));
  std::string hw = data_file("tiny-hw.json");
  CHECK_THAT(
      error_of(load_scenario(dir.write("s.json", "{\"hardware\": \"" + hw + "\", \"model\": \"nope\"}"), {})),
      Catch::Matchers::StartsWith(file +
                                  ": model: cannot open models/llm/nope.json: no such file (the model "
                                  "files of models/llm/, by name: deepseek-v3-fp8kv, ds27b, ds660b, dsv3, "));
  CHECK_THAT(
      error_of(
          load_scenario(dir.write("s.json", "{\"hardware\": \"" + hw + "\", \"model\": \"x/y.json\"}"), {})),
      Catch::Matchers::StartsWith(file + ": model: cannot open x/y.json: no such file (the model files"));
  CHECK_THAT(error_of(load_scenario(dir.write("s.json", "{\"hardware\": \"" + hw +
                                                            "\", \"model\": \"dsv3\", \"engine\": \"dsv3\"}"),
                                    {})),
             Catch::Matchers::EndsWith(
                 ": engine: cannot open models/engine/dsv3.json: no such file (the engine files of "
                 "models/engine/, by name: ant-h20-sglang, deepseek-v3-production, dualpath-paper)"));
  CHECK(error_of(load_with(dir, R"("workload": {"trace": "traces/none.jsonl"})")) ==
        file + ": workload.trace: cannot open traces/none.jsonl: no such file");
  dir.write("hwdir/x", "");
  CHECK_THAT(error_of(load_scenario(dir.write("s.json", R"({"hardware": "hwdir/", "model": "m"})"), {})),
             Contains(file + ": hardware: ") && Contains("is a directory"));
}

TEST_CASE("Scenario: a trace next to the scenario -> resolved path in the config, as written in resolved",
          "[unit]") {
  ScratchDir dir;
  dir.write("t.jsonl", "");
  auto sc = load_with(dir, R"("workload": {"trace": "t.jsonl"})");
  REQUIRE(error_of(sc) == "");
  CHECK(sc->workload.trace == dir.path("t.jsonl"));
  CHECK(sc->resolved["workload"]["trace"] == "t.jsonl");
}

TEST_CASE("Scenario: an invalid hardware file -> scenario file, field, hardware file and JSON path",
          "[unit]") {
  ScratchDir dir;
  std::string hw = dir.write("bad-hw.json", R"({"cnic": {"bw_Bps": -1}})");
  std::string s = dir.write(
      "s.json", "{\"hardware\": \"bad-hw.json\", \"model\": \"" + data_file("tiny-model.json") + "\"}");
  CHECK_THAT(error_of(load_scenario(s, {})),
             Contains(s + ": hardware: " + hw + ": cnic.bw_Bps: expected a number >= 1e+06, got -1"));
}

TEST_CASE("Scenario: weights that do not fit in HBM -> error names the model and hardware files", "[unit]") {
  ScratchDir dir;
  std::string s = dir.write("s.json", "{\"hardware\": \"" + data_file("tiny-hw.json") + "\", \"model\": \"" +
                                          data_file("huge-model.json") + "\"}");
  std::string msg = error_of(load_scenario(s, {}));
  CHECK_THAT(msg, Contains(s + ": cluster.prefill_nodes: the weights of " + data_file("huge-model.json")) &&
                      Contains("do not fit in the HBM of " + data_file("tiny-hw.json")));
}

TEST_CASE("Scenario: layer_group larger than the model's layers -> rejected", "[unit]") {
  ScratchDir dir;
  auto ok = load_with(dir, R"("sim": {"layer_group": 4})");
  REQUIRE(error_of(ok) == "");
  REQUIRE(ok->model.layers == 4);
  CHECK_THAT(error_of(load_with(dir, R"("sim": {"layer_group": 5})")),
             Contains("sim.layer_group: expected an integer in [0, 4]"));
}

TEST_CASE("Scenario: missing file, directory, malformed JSON -> errors naming the scenario file", "[unit]") {
  ScratchDir dir;
  CHECK_THAT(error_of(load_scenario(dir.path("none.json"), {})),
             Contains(dir.path("none.json") + ": cannot open"));
  CHECK_THAT(error_of(load_scenario(dir.dir(), {})),
             Contains(dir.dir() + ": expected a JSON file, got a directory"));
  CHECK_THAT(error_of(load_scenario(dir.write("m.json", "{\"hardware\": \"x\",, }"), {})),
             Contains(dir.path("m.json") + ":1:") && Contains("malformed JSON"));
}

TEST_CASE("Scenario: cluster.de_buffer -> dram or hbm, any other value or type is rejected", "[unit]") {
  ScratchDir dir;
  auto hbm = load_with(dir, R"("cluster": {"de_buffer": "hbm"})");
  REQUIRE(error_of(hbm) == "");
  CHECK(hbm->cluster.de_buffer == sim::config::DeBuffer::kHbm);
  CHECK(hbm->resolved["cluster"]["de_buffer"] == "hbm");
  auto dram = load_with(dir, "", {"cluster.de_buffer=dram"});
  REQUIRE(error_of(dram) == "");
  CHECK(dram->cluster.de_buffer == sim::config::DeBuffer::kDram);
  CHECK(error_of(load_with(dir, "", {"cluster.de_buffer=hbm"})) == "");
  const std::string file = dir.path("s.json");
  CHECK(error_of(load_with(dir, R"("cluster": {"de_buffer": "gpu"})")) ==
        file + ": cluster.de_buffer: expected one of dram, hbm, got \"gpu\"");
  CHECK(error_of(load_with(dir, R"("cluster": {"de_buffer": "HBM"})")) ==
        file + ": cluster.de_buffer: expected one of dram, hbm, got \"HBM\"");
  CHECK(error_of(load_with(dir, R"("cluster": {"de_buffer": 1})")) ==
        file + ": cluster.de_buffer: expected one of dram, hbm, got 1");
  CHECK(error_of(load_with(dir, R"("cluster": {"de_buffer": null})")) ==
        file + ": cluster.de_buffer: expected one of dram, hbm, got null");
  CHECK(error_of(load_with(dir, "", {"cluster.de_buffer=sram"})) ==
        file + ": --set cluster.de_buffer=sram: cluster.de_buffer: expected one of dram, hbm, got \"sram\"");
}
