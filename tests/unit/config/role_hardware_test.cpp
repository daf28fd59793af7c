// Hardware per role (scenario keys hardware_prefill / hardware_decode): the defaults, each role's file, the
// resolved echo, and the refusals (a node that changes role keeps its hardware).
#include <catch2/catch.hpp>
#include <string>

#include "sim/config/scenario.h"
#include "sim/config/units.h"
#include "tests/unit/config/config_fixtures.h"

using Catch::Matchers::Contains;
using sim::config::load_scenario;
using sim::config::ScenarioConfig;
using sim::config::UnitRole;
using sim::config::testing::data_file;
using sim::config::testing::error_of;
using sim::config::testing::ScratchDir;

namespace {

// tiny-hw with 4 GPUs per node, 96 GB of HBM, slower CNICs, a price, and other QoS weights.
constexpr const char* kOtherHw = R"({"name": "other-hw", "gpus_per_node": 4,
  "gpu": {"flops": 3e14, "hbm_bytes": 96e9, "hbm_bw_Bps": 4e12},
  "cnic": {"bw_Bps": 25e9}, "snic": {"bw_Bps": 50e9}, "dram": {"bw_Bps": 400e9},
  "qos": {"weight_collective": 9, "weight_kv": 1}, "cost": {"per_node_hour": 20}})";

// A scenario on tiny-hw (2 GPUs per node) and tiny-model in `dir`, with `extra` fields.
sim::StatusOr<ScenarioConfig> load(const ScratchDir& dir, const std::string& extra,
                                   const std::vector<std::string>& sets = {}) {
  dir.write("other-hw.json", kOtherHw);
  std::string text = "{\"hardware\": \"" + data_file("tiny-hw.json") + "\", \"model\": \"" +
                     data_file("tiny-model.json") + "\"";
  if (!extra.empty()) text += ", " + extra;
  return load_scenario(dir.write("s.json", text + "}"), sets);
}

}  // namespace

TEST_CASE("Role hardware: neither key given -> both roles on the hardware file, nothing echoed", "[unit]") {
  ScratchDir dir;
  auto sc = load(dir, "");
  REQUIRE(error_of(sc) == "");
  CHECK_FALSE(sc->mixed_hardware);
  CHECK(sc->prefill_hardware_file == data_file("tiny-hw.json"));
  CHECK(sc->decode_hardware_file == data_file("tiny-hw.json"));
  CHECK(sc->prefill_hardware.name == "tiny-hw");
  CHECK(sc->decode_hardware.name == "tiny-hw");
  CHECK(sc->decode_hardware.gpus_per_node == 2);
  CHECK_FALSE(sc->resolved.contains("hardware_prefill"));
  CHECK_FALSE(sc->resolved.contains("hardware_decode"));
  CHECK_FALSE(sim::config::mean_cost_per_node_hour(*sc).has_value());
}

TEST_CASE(
    "Role hardware: hardware_decode given -> decode nodes on it, prefill on hardware, echoed as written",
    "[unit]") {
  ScratchDir dir;
  auto sc =
      load(dir, R"("hardware_decode": "other-hw.json", "cluster": {"prefill_nodes": 1, "decode_nodes": 1},
                         "policy": {"ep_overlap": "none"})");
  REQUIRE(error_of(sc) == "");
  CHECK(sc->mixed_hardware);
  CHECK(sc->hardware_file == data_file("tiny-hw.json"));
  CHECK(sc->prefill_hardware_file == data_file("tiny-hw.json"));
  CHECK(sc->decode_hardware_file == dir.path("other-hw.json"));
  CHECK(sc->prefill_hardware.gpus_per_node == 2);
  CHECK(sc->decode_hardware.gpus_per_node == 4);
  CHECK(sc->decode_hardware.gpu_hbm_bytes == 96e9);
  CHECK(&sim::config::role_hardware(*sc, UnitRole::kDecode) == &sc->decode_hardware);
  CHECK(&sim::config::role_hardware(*sc, UnitRole::kPrefill) == &sc->prefill_hardware);
  // The scenario's execution choices reach the engine, which both roles run.
  CHECK(sc->engine.ep_overlap == sim::config::EpOverlap::kNone);
  // Units per role: a dense model has units of one GPU; the decode role has 4 GPUs.
  CHECK(sim::config::unit_gpus(*sc, UnitRole::kDecode) == 1);
  CHECK(sc->resolved.at("hardware_decode") == "other-hw.json");
  CHECK_FALSE(sc->resolved.contains("hardware_prefill"));
  // tiny-hw has no price: the mean is unknown.
  CHECK_FALSE(sim::config::mean_cost_per_node_hour(*sc).has_value());
  // The resolved scenario loads again to the same.
  auto again = load_scenario(dir.write("again.json", sc->resolved.dump(2)), {});
  REQUIRE(error_of(again) == "");
  CHECK(again->decode_hardware.gpus_per_node == 4);
}

TEST_CASE("Role hardware: both keys by --set -> each role its own, the price averaged over the nodes",
          "[unit]") {
  ScratchDir dir;
  dir.write("priced.json", R"({"name": "priced", "gpus_per_node": 2, "cost": {"per_node_hour": 10}})");
  auto sc = load(dir, R"("cluster": {"prefill_nodes": 1, "decode_nodes": 3})",
                 {"hardware_prefill=priced.json", "hardware_decode=other-hw.json"});
  REQUIRE(error_of(sc) == "");
  CHECK(sc->prefill_hardware.name == "priced");
  CHECK(sc->decode_hardware.name == "other-hw");
  CHECK(sc->resolved.at("hardware_prefill") == "priced.json");
  // (1 x 10 + 3 x 20) / 4 nodes.
  REQUIRE(sim::config::mean_cost_per_node_hour(*sc).has_value());
  CHECK(*sim::config::mean_cost_per_node_hour(*sc) == 17.5);
}

TEST_CASE("Role hardware: the same file under two names -> not mixed, role changes allowed", "[unit]") {
  ScratchDir dir;
  // An absolute path and a relative one ("./" and "../") to the same file.
  dir.write("sub/x.json", "{}");
  auto sc = load(dir, R"("hardware_prefill": "other-hw.json", "hardware_decode": "./sub/../other-hw.json",
                         "cluster": {"prefill_nodes": 2},
                         "events": [{"kind": "role_change", "at_s": 30, "nodes": [1], "to": "decode"}])");
  REQUIRE(error_of(sc) == "");
  CHECK_FALSE(sc->mixed_hardware);
  CHECK(sc->decode_hardware.name == "other-hw");
  CHECK(sc->prefill_hardware.name == "other-hw");
}

TEST_CASE("Role hardware: two files with a role_change or the autoscaler -> refused, naming the fields",
          "[unit]") {
  ScratchDir dir;
  auto ev = load(dir, R"("hardware_decode": "other-hw.json", "cluster": {"prefill_nodes": 2},
                         "events": [{"kind": "role_change", "at_s": 30, "nodes": [1], "to": "decode"}])");
  CHECK_THAT(error_of(ev), Contains("events[0]: a role_change needs one hardware file for both roles") &&
                               Contains("hardware_prefill / hardware_decode") && Contains("other-hw.json") &&
                               Contains("keeps its hardware"));
  auto as = load(dir, R"("hardware_decode": "other-hw.json", "control": {"autoscale": {"policy": "slo"}})");
  CHECK_THAT(error_of(as), Contains("control.autoscale.policy: expected \"off\", got \"slo\"") &&
                               Contains("hardware_prefill / hardware_decode"));
  // Node failures are fine.
  auto down = load(dir, R"("hardware_decode": "other-hw.json", "cluster": {"decode_nodes": 2},
                           "events": [{"kind": "node_down", "at_s": 30, "nodes": [2]}])");
  CHECK(error_of(down) == "");
}

TEST_CASE("Role hardware: bad references -> errors name the field and the file", "[unit]") {
  ScratchDir dir;
  CHECK_THAT(error_of(load(dir, R"("hardware_decode": "nowhere.json")")),
             Contains("hardware_decode: cannot open nowhere.json: no such file"));
  CHECK_THAT(error_of(load(dir, R"("hardware_prefill": "no-such-name")")),
             Contains("hardware_prefill: cannot open models/hardware/no-such-name.json"));
  CHECK_THAT(error_of(load(dir, R"("hardware_decode": 8)")), Contains("hardware_decode"));
  dir.write("broken.json", R"({"gpus_per_node": 0})");
  CHECK_THAT(error_of(load(dir, R"("hardware_decode": "broken.json")")),
             Contains("hardware_decode: ") && Contains("gpus_per_node"));
  CHECK_THAT(error_of(load(dir, R"("hardware_decod": "other-hw.json")")), Contains("hardware_decod"));
}

TEST_CASE("Role hardware: priority QoS with different weights, or a GPU index past the node's -> refused",
          "[unit]") {
  ScratchDir dir;
  CHECK_THAT(error_of(load(dir, R"("hardware_decode": "other-hw.json", "network": {"qos": "priority"})")),
             Contains("network.qos") && Contains("qos.weight_collective and qos.weight_kv"));
  // Decode nodes have 4 GPUs, prefill nodes 2: GPU 3 exists on node 2 (decode), not on node 0 (prefill).
  const std::string degrade =
      R"("hardware_decode": "other-hw.json", "events": [{"kind": "link_degrade", "at_s": 1, "until_s": 2,
         "node": NODE, "resource": "cnic", "gpu": 3, "factor": 0.5}])";
  auto on = [&](const std::string& node) {
    std::string s = degrade;
    return s.replace(s.find("NODE"), 4, node);
  };
  CHECK(error_of(load(dir, on("2"))) == "");
  CHECK_THAT(error_of(load(dir, on("0"))),
             Contains("events[0].gpu: expected -1 or an integer in [0, 1]") && Contains("tiny-hw.json"));
}

TEST_CASE("Role hardware: weights that fit one role's HBM only -> the other role's unit is refused",
          "[unit]") {
  ScratchDir dir;
  // 40e9 parameters at 2 B on one GPU: 80 GB, not below tiny-hw's 80 GB of HBM, below other-hw's 96 GB.
  dir.write("big.json", R"({"name": "big", "layers": 4,
    "params": {"active": 4e10, "total": 4e10, "weight_bytes_per_param": 2},
    "kv": {"bytes_per_token_layer": 1024},
    "attention": {"kind": "gqa", "heads": 8, "qk_head_dim": 128, "v_head_dim": 128}})");
  auto prefill_big = load(dir, "", {"model=big.json", "hardware_prefill=other-hw.json"});
  CHECK_THAT(error_of(prefill_big), Contains("decode unit") && Contains("tiny-hw.json"));
  auto both_big = load(dir, "", {"model=big.json", "hardware=other-hw.json"});
  CHECK(error_of(both_big) == "");
}
