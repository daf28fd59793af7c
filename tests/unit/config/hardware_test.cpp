#include "sim/config/hardware.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/config/config_fixtures.h"

using Catch::Matchers::Contains;
using sim::config::HardwareSpec;
using sim::config::load_hardware;
using sim::config::testing::error_of;
using sim::config::testing::ScratchDir;

namespace {

// Loads a hardware file with the given text, written as <scratch>/<name>.
sim::StatusOr<HardwareSpec> load_text(const ScratchDir& dir, const std::string& text,
                                      const std::string& name = "hw.json") {
  return load_hardware(dir.write(name, text));
}

std::string project_file(const std::string& rel) {
  return std::string(DPSIM_SOURCE_DIR) + "/" + rel;
}

}  // namespace

TEST_CASE("Hardware: empty object -> every default of HardwareSpec, name = file stem", "[unit]") {
  ScratchDir dir;
  auto hw = load_text(dir, "{}", "my-node.json");
  REQUIRE(hw);
  const HardwareSpec def;
  CHECK(hw->name == "my-node");
  CHECK(hw->file == dir.path("my-node.json"));
  CHECK(hw->gpus_per_node == def.gpus_per_node);
  CHECK(hw->gpu_flops == def.gpu_flops);
  CHECK(hw->gpu_hbm_bytes == def.gpu_hbm_bytes);
  CHECK(hw->gpu_hbm_bw_Bps == def.gpu_hbm_bw_Bps);
  CHECK(hw->cnic_bw_Bps == def.cnic_bw_Bps);
  CHECK(hw->snic_bw_Bps == def.snic_bw_Bps);
  CHECK(hw->dram_bw_Bps == def.dram_bw_Bps);
  CHECK(hw->pcie_bw_Bps == def.pcie_bw_Bps);
  CHECK(hw->link_latency_s == def.link_latency_s);
  CHECK(hw->storage_bw_per_node_Bps == def.storage_bw_per_node_Bps);
  CHECK(hw->gpu_bf16_flops == def.gpu_bf16_flops);
  CHECK(hw->gpu_sms == def.gpu_sms);
  CHECK(hw->nvlink_bw_Bps == def.nvlink_bw_Bps);
}

TEST_CASE("Hardware: the defaults -> a Hopper GPU of 132 SMs, no NVLink, BF16 at half the FP8 peak",
          "[unit]") {
  const HardwareSpec def;
  // The documented defaults (sim/config/hardware.h).
  CHECK(def.gpu_bf16_flops == 0);
  CHECK(def.bf16_flops() == def.gpu_flops / 2);  // 0 = half of gpu.flops
  CHECK(def.gpu_sms == 132);
  CHECK(def.nvlink_bw_Bps == 0);
  HardwareSpec given = def;
  given.gpu_bf16_flops = 900e12;  // an explicit BF16 peak wins over the half
  CHECK(given.bf16_flops() == 900e12);
}

TEST_CASE("Hardware: every field given -> each lands in its member", "[unit]") {
  ScratchDir dir;
  auto hw = load_text(dir, R"({"name": "n", "notes": ["a", "b"], "sources": {"gpu.flops": "spec"},
    "gpus_per_node": 4, "gpu": {"flops": 1e15, "bf16_flops": 4e14, "hbm_bytes": 96e9, "hbm_bw_Bps": 4e12,
                                "sms": 78},
    "nvlink": {"bw_Bps": 150e9},
    "cnic": {"bw_Bps": 25e9}, "snic": {"bw_Bps": 100e9}, "dram": {"bw_Bps": 300e9},
    "pcie": {"bw_Bps": 64e9}, "link_latency_s": 2e-6,
    "storage": {"bw_per_node_Bps": 40e9}})");
  REQUIRE(hw);
  CHECK(hw->name == "n");
  CHECK(hw->gpus_per_node == 4);
  CHECK(hw->gpu_flops == 1e15);
  CHECK(hw->gpu_hbm_bytes == 96e9);
  CHECK(hw->gpu_hbm_bw_Bps == 4e12);
  CHECK(hw->cnic_bw_Bps == 25e9);
  CHECK(hw->snic_bw_Bps == 100e9);
  CHECK(hw->dram_bw_Bps == 300e9);
  CHECK(hw->pcie_bw_Bps == 64e9);
  CHECK(hw->link_latency_s == 2e-6);
  CHECK(hw->storage_bw_per_node_Bps == 40e9);
  CHECK(hw->gpu_bf16_flops == 4e14);
  CHECK(hw->bf16_flops() == 4e14);
  CHECK(hw->gpu_sms == 78);
  CHECK(hw->nvlink_bw_Bps == 150e9);
  CHECK(hw->s() == Approx(4.0));
}

TEST_CASE("Hardware: the paper's node file -> g = 8, B = s*B = 50 GB/s, M = 500 GB/s, Hopper specs",
          "[unit]") {
  auto hw = load_hardware(project_file("models/hardware/hopper-8x400g.json"));
  REQUIRE(error_of(hw) == "");
  CHECK(hw->name == "hopper-8x400g");
  CHECK(hw->gpus_per_node == 8);
  CHECK(hw->cnic_bw_Bps == 50e9);
  CHECK(hw->snic_bw_Bps == 50e9);
  CHECK(hw->s() == 1.0);
  CHECK(hw->dram_bw_Bps == 500e9);
  CHECK(hw->gpu_flops == 1.979e15);
  CHECK(hw->gpu_hbm_bytes == 80e9);
  CHECK(hw->gpu_hbm_bw_Bps == 3.35e12);
  CHECK(hw->gpu_bf16_flops == 989e12);
  CHECK(hw->gpu_sms == 132);
  CHECK(hw->nvlink_bw_Bps == 160e9);
}

TEST_CASE("Hardware: the 4-GPU what-if file -> same as the paper's node except g = 4", "[unit]") {
  auto a = load_hardware(project_file("models/hardware/hopper-8x400g.json"));
  auto b = load_hardware(project_file("models/hardware/hopper-4x400g.json"));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(b->gpus_per_node == 4);
  CHECK(b->gpu_flops == a->gpu_flops);
  CHECK(b->gpu_hbm_bytes == a->gpu_hbm_bytes);
  CHECK(b->gpu_hbm_bw_Bps == a->gpu_hbm_bw_Bps);
  CHECK(b->cnic_bw_Bps == a->cnic_bw_Bps);
  CHECK(b->snic_bw_Bps == a->snic_bw_Bps);
  CHECK(b->dram_bw_Bps == a->dram_bw_Bps);
  CHECK(b->pcie_bw_Bps == a->pcie_bw_Bps);
  CHECK(b->storage_bw_per_node_Bps == a->storage_bw_per_node_Bps);
  CHECK(b->gpu_bf16_flops == a->gpu_bf16_flops);
  CHECK(b->gpu_sms == a->gpu_sms);
  CHECK(b->nvlink_bw_Bps == a->nvlink_bw_Bps);
}

TEST_CASE("Hardware: the H20 what-if file -> the H20's GPU in the paper's node chassis", "[unit]") {
  auto a = load_hardware(project_file("models/hardware/hopper-8x400g.json"));
  auto h = load_hardware(project_file("models/hardware/h20-8x400g.json"));
  REQUIRE(a);
  REQUIRE(h);
  // NVIDIA's published H20 figures (see the file's sources).
  CHECK(h->gpus_per_node == 8);
  CHECK(h->gpu_flops == 296e12);
  CHECK(h->gpu_bf16_flops == 148e12);
  CHECK(h->gpu_hbm_bytes == 96e9);
  CHECK(h->gpu_hbm_bw_Bps == 4.0e12);
  CHECK(h->nvlink_bw_Bps == 360e9);  // derived: 0.8 x 450 GB/s per direction
  // The same chassis: NICs, DRAM, storage, QoS.
  CHECK(h->cnic_bw_Bps == a->cnic_bw_Bps);
  CHECK(h->snic_bw_Bps == a->snic_bw_Bps);
  CHECK(h->dram_bw_Bps == a->dram_bw_Bps);
  CHECK(h->pcie_bw_Bps == a->pcie_bw_Bps);
  CHECK(h->storage_bw_per_node_Bps == a->storage_bw_per_node_Bps);
  CHECK(h->qos_weight_collective == a->qos_weight_collective);
}

TEST_CASE("Hardware: every number in the hardware files -> has a source", "[unit]") {
  // Every section and top-level value of the hardware format. A key outside these lists is reported too,
  // so a new section cannot slip in undocumented: extend the lists.
  const std::set<std::string> sections = {"gpu",  "nvlink", "cnic",    "snic", "dram",
                                          "pcie", "qos",    "storage", "cost"};
  const std::set<std::string> values = {"gpus_per_node", "link_latency_s"};
  const std::set<std::string> documentation = {"name", "notes", "sources"};
  for (const char* name : {"hopper-8x400g", "hopper-4x400g", "h20-8x400g"}) {
    std::ifstream in(project_file(std::string("models/hardware/") + name + ".json"));
    nlohmann::json doc = nlohmann::json::parse(in);
    const nlohmann::json& sources = doc.at("sources");
    std::string missing;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (sections.count(it.key())) {
        for (auto f = it->begin(); f != it->end(); ++f)
          if (!sources.contains(it.key() + "." + f.key())) missing += " " + it.key() + "." + f.key();
      } else if (values.count(it.key())) {
        if (!sources.contains(it.key())) missing += " " + it.key();
      } else if (!documentation.count(it.key())) {
        missing += " (unknown to this test) " + it.key();
      }
    }
    INFO(name << " lacks a source for:" << missing);
    CHECK(missing.empty());
    // The sections are there to be checked.
    for (const char* key : {"gpu", "nvlink", "storage"}) CHECK(doc.contains(key));
    CHECK(doc.at("gpu").contains("bf16_flops"));
    CHECK(doc.at("gpu").contains("sms"));
  }
}

TEST_CASE("Hardware: unknown keys -> rejected with the file and the JSON path", "[unit]") {
  ScratchDir dir;
  std::string file = dir.path("hw.json");
  CHECK_THAT(error_of(load_text(dir, R"({"gpu_count": 8})")),
             Contains(file + ": gpu_count: unknown key") && Contains("gpus_per_node"));
  CHECK_THAT(error_of(load_text(dir, R"({"gpu": {"flop": 1e15}})")),
             Contains(file + ": gpu.flop: unknown key") && Contains("hbm_bw_Bps"));
  // A key without its unit is unknown: the unit is part of the name.
  CHECK_THAT(error_of(load_text(dir, R"({"cnic": {"bw": 50e9}})")), Contains("cnic.bw: unknown key"));
}

TEST_CASE("Hardware: wrong JSON types -> rejected with what was expected and what was found", "[unit]") {
  ScratchDir dir;
  CHECK_THAT(error_of(load_text(dir, R"({"gpus_per_node": "8"})")),
             Contains("gpus_per_node: expected an integer in [1, 64], got \"8\""));
  CHECK_THAT(error_of(load_text(dir, R"({"gpu": 5})")), Contains("gpu: expected an object, got 5"));
  CHECK_THAT(error_of(load_text(dir, R"({"dram": {"bw_Bps": "500e9"}})")),
             Contains("dram.bw_Bps: expected a number >= 1e+06, got \"500e9\""));
  CHECK_THAT(error_of(load_text(dir, R"({"name": 3})")), Contains("name: expected a string"));
  CHECK_THAT(error_of(load_text(dir, R"({"notes": 3})")), Contains("notes: expected a string or an array"));
  CHECK_THAT(error_of(load_text(dir, R"({"sources": "paper"})")), Contains("sources: expected an object"));
}

TEST_CASE("Hardware: gpus_per_node below 1, above 64 or fractional -> rejected", "[unit]") {
  ScratchDir dir;
  for (const char* bad : {"0", "-8", "65", "2.5"}) {
    INFO(bad);
    CHECK_THAT(error_of(load_text(dir, std::string(R"({"gpus_per_node": )") + bad + "}")),
               Contains("gpus_per_node: expected an integer in [1, 64], got " + std::string(bad)));
  }
  CHECK(load_text(dir, R"({"gpus_per_node": 1})"));
  CHECK(load_text(dir, R"({"gpus_per_node": 64})"));
}

TEST_CASE("Hardware: bandwidth, FLOP/s or HBM outside its bounds -> rejected with the field", "[unit]") {
  // Zero, negative, a unit slip below the bound (GB/s written as B/s: 50 for 50e9; TFLOP/s as FLOP/s) and
  // past 1e20 (scenarios/README.md, "Bounds, and why").
  ScratchDir dir;
  const char* link = "expected a number >= 1e+06, got ";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"cnic": {"bw_Bps": 0}})", std::string("cnic.bw_Bps: ") + link + "0"},
      {R"({"snic": {"bw_Bps": -50e9}})", std::string("snic.bw_Bps: ") + link + "-5"},
      {R"({"cnic": {"bw_Bps": 50}})", std::string("cnic.bw_Bps: ") + link + "50"},
      {R"({"dram": {"bw_Bps": 5e5}})", std::string("dram.bw_Bps: ") + link + "5"},
      {R"({"cnic": {"bw_Bps": 1e30}})", "cnic.bw_Bps: expected a number >= 1e+06 (at most 1e+20), got 1e+30"},
      {R"({"gpu": {"flops": 0}})", "gpu.flops: expected a number >= 1e+12, got 0"},
      {R"({"gpu": {"flops": 989}})", "gpu.flops: expected a number >= 1e+12, got 989"},
      {R"({"gpu": {"bf16_flops": 148}})", "gpu.bf16_flops: expected 0 or a number >= 1e+12, got 148"},
      {R"({"gpu": {"hbm_bytes": -1}})", "gpu.hbm_bytes: expected a number >= 1e+09, got -1"},
      {R"({"gpu": {"hbm_bytes": 80}})", "gpu.hbm_bytes: expected a number >= 1e+09, got 80"},
      {R"({"gpu": {"hbm_bw_Bps": 3.35e9}})", "gpu.hbm_bw_Bps: expected a number >= 1e+10, got 3"},
      {R"({"nvlink": {"bw_Bps": 160}})", "nvlink.bw_Bps: expected 0 or a number >= 1e+06, got 160"},
      {R"({"pcie": {"bw_Bps": -1}})", "pcie.bw_Bps: expected a number >= 0"},
      {R"({"pcie": {"bw_Bps": 64}})", "pcie.bw_Bps: expected 0 or a number >= 1e+06, got 64"},
      {R"({"storage": {"bw_per_node_Bps": -1}})", "storage.bw_per_node_Bps: expected a number >= 0"},
      {R"({"storage": {"bw_per_node_Bps": 20}})", "storage.bw_per_node_Bps: expected 0 or a number >= 1e+06"},
      {R"({"link_latency_s": -1e-6})", "link_latency_s: expected a number >= 0"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    CHECK_THAT(error_of(load_text(dir, text)), Contains(expected));
  }
  // At the bounds: accepted.
  CHECK(load_text(
      dir, R"({"cnic": {"bw_Bps": 1e6}, "gpu": {"flops": 1e12, "hbm_bytes": 1e9, "hbm_bw_Bps": 1e10}})"));
  CHECK(load_text(dir, R"({"gpu": {"flops": 1e18, "hbm_bw_Bps": 1e18}, "nvlink": {"bw_Bps": 0}})"));
}

TEST_CASE("Hardware: PCIe and storage bandwidth 0 -> accepted as 'not modelled'", "[unit]") {
  ScratchDir dir;
  auto hw = load_text(dir, R"({"pcie": {"bw_Bps": 0}, "storage": {"bw_per_node_Bps": 0}})");
  REQUIRE(hw);
  CHECK(hw->pcie_bw_Bps == 0);
  CHECK(hw->storage_bw_per_node_Bps == 0);
}

TEST_CASE(
    "Hardware: a software value (kernels, collectives, the storage client) -> refused, pointing to the "
    "engine",
    "[unit]") {
  // The node file holds hardware only: what the software makes of it is the engine file's (config/engine.h).
  // A file written before the split fails on the first such key, with where it went.
  ScratchDir dir;
  const std::string file = dir.path("hw.json");
  for (const char* key :
       {R"({"kernels": {"gemm": 0.5}})", R"({"collectives": {"ep_gpus": [8]}})",
        R"({"storage": {"efficiency": 0.85}})", R"({"storage": {"request_overhead_s": 1e-5}})"}) {
    INFO(key);
    const std::string err = error_of(load_text(dir, key));
    CHECK_THAT(err, Contains(file + ": ") && Contains("a node file holds hardware only") &&
                        Contains("models/engine/"));
  }
  CHECK_THAT(error_of(load_text(dir, R"({"storage": {"efficiency": 0.85}})")),
             Contains(": storage.efficiency: "));
  // Out-of-range hardware values.
  const char* cases[][2] = {
      {R"({"nvlink": {"bw_Bps": -160}})", "nvlink.bw_Bps: expected a number >= 0, got -160"},
      {R"({"nvlink": {"bw": 160e9}})", "nvlink.bw: unknown key"},
      {R"({"gpu": {"bf16_flops": -1}})", "gpu.bf16_flops: expected a number >= 0, got -1"},
      {R"({"gpu": {"sms": 0}})", "gpu.sms: expected an integer in [1, 100000], got 0"},
      {R"({"sources": {"gpu.flop": "spec"}})", "sources.gpu.flop: expected the path of a field of this file"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    CHECK_THAT(error_of(load_text(dir, c[0])), Contains(file + ": " + c[1]));
  }
}

TEST_CASE("Hardware: cost.per_node_hour given -> the price, absent or an empty cost -> unknown", "[unit]") {
  ScratchDir dir;
  auto priced = load_text(dir, R"({"cost": {"per_node_hour": 2.5}})");
  REQUIRE(error_of(priced) == "");
  REQUIRE(priced->cost_per_node_hour.has_value());
  CHECK(*priced->cost_per_node_hour == 2.5);
  auto free = load_text(dir, R"({"cost": {"per_node_hour": 0}})");  // 0 is a price (owned, paid for)
  REQUIRE(error_of(free) == "");
  CHECK(free->cost_per_node_hour == std::optional<double>(0.0));
  for (const char* unknown : {"{}", R"({"cost": {}})"}) {
    INFO(unknown);
    auto hw = load_text(dir, unknown);
    REQUIRE(error_of(hw) == "");
    CHECK_FALSE(hw->cost_per_node_hour.has_value());
  }
  CHECK_FALSE(HardwareSpec().cost_per_node_hour.has_value());
  // The shipped files give no price: the paper gives none.
  for (const char* name : {"hopper-8x400g", "hopper-4x400g", "h20-8x400g"}) {
    INFO(name);
    auto hw = load_hardware(project_file(std::string("models/hardware/") + name + ".json"));
    REQUIRE(error_of(hw) == "");
    CHECK_FALSE(hw->cost_per_node_hour.has_value());
  }
}

TEST_CASE(
    "Hardware: cost.per_node_hour negative, not a number, null or too large -> rejected naming the file "
    "and the field",
    "[unit]") {
  ScratchDir dir;
  const std::string file = dir.path("hw.json");
  const char* cases[][2] = {
      {R"({"cost": {"per_node_hour": -1}})", "cost.per_node_hour: expected a number >= 0, got -1"},
      {R"({"cost": {"per_node_hour": -0.01}})", "cost.per_node_hour: expected a number >= 0, got -0.01"},
      {R"({"cost": {"per_node_hour": "2.5"}})", "cost.per_node_hour: expected a number >= 0, got \"2.5\""},
      {R"({"cost": {"per_node_hour": null}})", "cost.per_node_hour: expected a number >= 0, got null"},
      {R"({"cost": {"per_node_hour": [2.5]}})", "cost.per_node_hour: expected a number >= 0, got [2.5]"},
      {R"({"cost": {"per_node_hour": true}})", "cost.per_node_hour: expected a number >= 0, got true"},
      {R"({"cost": {"per_node_hour": 1e30}})", "cost.per_node_hour: expected a number >= 0 (at most 1e+20)"},
      {R"({"cost": 2.5})", "cost: expected an object, got 2.5"},
      {R"({"cost": {"per_hour": 2.5}})", "cost.per_hour: unknown key (expected one of: per_node_hour)"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    CHECK_THAT(error_of(load_text(dir, c[0])), Contains(file + ": " + c[1]));
  }
  // Not finite: JSON has no infinity; a literal beyond a double's range is a parse error naming the file.
  CHECK_THAT(error_of(load_text(dir, R"({"cost": {"per_node_hour": 1e400}})")),
             Contains(file + ": malformed JSON") && Contains("number overflow"));
}

TEST_CASE("Hardware: missing file, directory, malformed JSON -> errors naming the file", "[unit]") {
  ScratchDir dir;
  CHECK_THAT(error_of(load_hardware(dir.path("nope.json"))),
             Contains(dir.path("nope.json") + ": cannot open"));
  CHECK_THAT(error_of(load_hardware(dir.dir())),
             Contains(dir.dir() + ": expected a JSON file, got a directory"));
  CHECK_THAT(error_of(load_text(dir, "{\n  \"gpus_per_node\": 8,\n}")),
             Contains(dir.path("hw.json") + ":3:") && Contains("malformed JSON"));
  CHECK_THAT(error_of(load_text(dir, "[1, 2]")), Contains("expected a JSON object at the top level"));
}
