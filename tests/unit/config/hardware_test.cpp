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
  CHECK(hw->storage_efficiency == def.storage_efficiency);
  CHECK(hw->storage_request_overhead_s == def.storage_request_overhead_s);
  CHECK(hw->gpu_bf16_flops == def.gpu_bf16_flops);
  CHECK(hw->k_prefill_attention == def.k_prefill_attention);
  CHECK(hw->k_decode_attention == def.k_decode_attention);
  CHECK(hw->k_indexer == def.k_indexer);
  CHECK(hw->k_gemm == def.k_gemm);
  CHECK(hw->k_gemm_hbm == def.k_gemm_hbm);
  CHECK(hw->k_attention_hbm == def.k_attention_hbm);
  CHECK(hw->prefill_layer_overhead_s == def.prefill_layer_overhead_s);
  CHECK(hw->decode_step_overhead_s == def.decode_step_overhead_s);
  CHECK(hw->nvlink_bw_Bps == def.nvlink_bw_Bps);
}

TEST_CASE("Hardware: the defaults of the new sections -> Hopper kernels, no NVLink, no storage overhead",
          "[unit]") {
  const HardwareSpec def;
  // The documented defaults (sim/config/hardware.h): the Hopper kernel fractions, nothing extra.
  CHECK(def.gpu_bf16_flops == 0);
  CHECK(def.bf16_flops() == def.gpu_flops / 2);  // 0 = half of gpu.flops
  CHECK(def.k_prefill_attention == 0.3234);
  CHECK(def.k_decode_attention == 0.2072);
  CHECK(def.k_indexer == 0.3234);  // as prefill attention
  CHECK(def.k_gemm == 0.6468);
  CHECK(def.k_gemm_hbm == 0.7964);
  CHECK(def.k_attention_hbm == 0.8955);
  CHECK(def.prefill_layer_overhead_s == 0);
  CHECK(def.decode_step_overhead_s == 0);
  CHECK(def.nvlink_bw_Bps == 0);
  CHECK(def.storage_request_overhead_s == 0);
  HardwareSpec given = def;
  given.gpu_bf16_flops = 900e12;  // an explicit BF16 peak wins over the half
  CHECK(given.bf16_flops() == 900e12);
}

TEST_CASE("Hardware: every field given -> each lands in its member", "[unit]") {
  ScratchDir dir;
  auto hw = load_text(dir, R"({"name": "n", "notes": ["a", "b"], "sources": {"gpu.flops": "spec"},
    "gpus_per_node": 4, "gpu": {"flops": 1e15, "bf16_flops": 4e14, "hbm_bytes": 96e9, "hbm_bw_Bps": 4e12},
    "kernels": {"prefill_attention": 0.1, "decode_attention": 0.2, "indexer": 0.25, "gemm": 0.3,
                "gemm_hbm": 0.4, "attention_hbm": 0.5, "prefill_layer_overhead_s": 1e-4,
                "decode_step_overhead_s": 0.02},
    "nvlink": {"bw_Bps": 150e9},
    "cnic": {"bw_Bps": 25e9}, "snic": {"bw_Bps": 100e9}, "dram": {"bw_Bps": 300e9},
    "pcie": {"bw_Bps": 64e9}, "link_latency_s": 2e-6,
    "storage": {"bw_per_node_Bps": 40e9, "efficiency": 0.9, "request_overhead_s": 3e-5}})");
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
  CHECK(hw->storage_efficiency == 0.9);
  CHECK(hw->storage_request_overhead_s == 3e-5);
  CHECK(hw->gpu_bf16_flops == 4e14);
  CHECK(hw->bf16_flops() == 4e14);
  CHECK(hw->k_prefill_attention == 0.1);
  CHECK(hw->k_decode_attention == 0.2);
  CHECK(hw->k_indexer == 0.25);
  CHECK(hw->k_gemm == 0.3);
  CHECK(hw->k_gemm_hbm == 0.4);
  CHECK(hw->k_attention_hbm == 0.5);
  CHECK(hw->prefill_layer_overhead_s == 1e-4);
  CHECK(hw->decode_step_overhead_s == 0.02);
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
  // The kernels' published rates as fractions of the peaks: FlashMLA 640 and 410 TFLOP/s of 1,979,
  // DeepGEMM 1,280 TFLOP/s of 1,979 and 2,668 GB/s of 3,350, FlashMLA 3,000 GB/s of 3,350.
  CHECK(hw->k_prefill_attention == Approx(640.0 / 1979).epsilon(1e-3));
  CHECK(hw->k_decode_attention == Approx(410.0 / 1979).epsilon(1e-3));
  CHECK(hw->k_gemm == Approx(1280.0 / 1979).epsilon(1e-3));
  CHECK(hw->k_gemm_hbm == Approx(2668.0 / 3350).epsilon(1e-3));
  CHECK(hw->k_attention_hbm == Approx(3000.0 / 3350).epsilon(1e-3));
  // DeepGEMM's six dense GEMMs of a DeepSeek-V3 layer at M = 64: 100.1 us at their published TFLOP/s against
  // 86.6 us at the rates above: 13.5 us per layer and micro-batch. No public per-step figure.
  CHECK(hw->prefill_layer_overhead_s == 13.5e-6);
  CHECK(hw->decode_layer_overhead_s == 13.5e-6);
  CHECK(hw->decode_step_overhead_s == 0);
  CHECK(hw->nvlink_bw_Bps == 160e9);
  // DeepEP's low-latency kernels at 128 tokens per GPU, less their bytes at the CNIC's 50 GB/s: at EP32
  // (4 nodes, 3/4 remote) dispatch 155 us - 128 x 8 x 7168 x 1.03125 B x 3/4 / 50e9 B/s = 155 - 113.5 us,
  // combine 273 us - the same x 2 B per value = 273 - 220.2 us.
  const sim::config::EpLatencyTable& t = hw->ep_latency;
  REQUIRE(t.ep_gpus == std::vector<int>{8, 16, 32, 64, 128, 256});
  CHECK(t.decode_dispatch_s[2] == Approx(155e-6 - 128 * 8 * 7168 * 1.03125 * 0.75 / 50e9).margin(0.1e-6));
  CHECK(t.decode_combine_s[2] == Approx(273e-6 - 128 * 8 * 7168 * 2 * 0.75 / 50e9).margin(0.1e-6));
  // EP8 is one node: 7/8 of the bytes over NVLink at 160 GB/s. 77 and 114 us published.
  CHECK(t.decode_dispatch_s[0] == Approx(77e-6 - 128 * 8 * 7168 * 1.03125 * 0.875 / 160e9).margin(0.1e-6));
  CHECK(t.decode_combine_s[0] == Approx(114e-6 - 128 * 8 * 7168 * 2 * 0.875 / 160e9).margin(0.1e-6));
  // No latency is published for the normal (prefill) kernels: the low-latency ones stand in.
  CHECK(t.prefill_dispatch_s == t.decode_dispatch_s);
  CHECK(t.prefill_combine_s == t.decode_combine_s);
  // 3FS: 40 GiB/s of 50 GB/s.
  CHECK(hw->storage_efficiency == Approx(40.0 * (1 << 30) / 50e9).epsilon(1e-3));
  // The DSA indexer from the V3.2-Exp report's Figure 3: a prefill slope of 7.0141e-7 USD per million
  // tokens per position at 2 USD per GPU-hour is 1.2625e-9 GPU-s per (query, token) pair, of 999,424
  // indexer FLOPs over 61 layers.
  CHECK(hw->k_indexer == Approx(999424 / (7.0141e-7 / 2 * 3600 / 1e6) / 1.979e15).epsilon(1e-3));
  // The two CALIBRATION values (see their sources). The cost tests pin these values themselves, so a refit
  // changes this check only.
  CHECK(hw->k_prefill_efficiency == 0.39);
  CHECK(hw->storage_request_overhead_s == 38e-6);
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
  CHECK(b->storage_efficiency == a->storage_efficiency);
  CHECK(b->storage_request_overhead_s == a->storage_request_overhead_s);
  CHECK(b->gpu_bf16_flops == a->gpu_bf16_flops);
  CHECK(b->k_prefill_attention == a->k_prefill_attention);
  CHECK(b->k_decode_attention == a->k_decode_attention);
  CHECK(b->k_indexer == a->k_indexer);
  CHECK(b->k_gemm == a->k_gemm);
  CHECK(b->k_gemm_hbm == a->k_gemm_hbm);
  CHECK(b->k_attention_hbm == a->k_attention_hbm);
  CHECK(b->k_prefill_efficiency == a->k_prefill_efficiency);
  CHECK(b->prefill_layer_overhead_s == a->prefill_layer_overhead_s);
  CHECK(b->decode_layer_overhead_s == a->decode_layer_overhead_s);
  CHECK(b->decode_step_overhead_s == a->decode_step_overhead_s);
  CHECK(b->ep_latency.ep_gpus == a->ep_latency.ep_gpus);
  CHECK(b->ep_latency.decode_dispatch_s == a->ep_latency.decode_dispatch_s);
  CHECK(b->ep_latency.decode_combine_s == a->ep_latency.decode_combine_s);
  CHECK(b->ep_latency.prefill_dispatch_s == a->ep_latency.prefill_dispatch_s);
  CHECK(b->ep_latency.prefill_combine_s == a->ep_latency.prefill_combine_s);
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
  // The same chassis: NICs, DRAM, storage, QoS; and the H800 fractions, fits and overheads, assumed to carry.
  CHECK(h->cnic_bw_Bps == a->cnic_bw_Bps);
  CHECK(h->snic_bw_Bps == a->snic_bw_Bps);
  CHECK(h->dram_bw_Bps == a->dram_bw_Bps);
  CHECK(h->pcie_bw_Bps == a->pcie_bw_Bps);
  CHECK(h->storage_efficiency == a->storage_efficiency);
  CHECK(h->storage_request_overhead_s == a->storage_request_overhead_s);
  CHECK(h->qos_weight_collective == a->qos_weight_collective);
  CHECK(h->k_prefill_efficiency == a->k_prefill_efficiency);
  CHECK(h->k_prefill_attention == a->k_prefill_attention);
  CHECK(h->k_decode_attention == a->k_decode_attention);
  CHECK(h->k_indexer == a->k_indexer);
  CHECK(h->k_gemm == a->k_gemm);
  CHECK(h->k_gemm_hbm == a->k_gemm_hbm);
  CHECK(h->k_attention_hbm == a->k_attention_hbm);
  CHECK(h->decode_layer_overhead_s == a->decode_layer_overhead_s);
  CHECK(h->ep_latency.decode_combine_s == a->ep_latency.decode_combine_s);
}

TEST_CASE("Hardware: every number in the hardware files -> has a source", "[unit]") {
  // Every section and top-level value of the hardware format. A key outside these lists is reported too,
  // so a new section cannot slip in undocumented: extend the lists.
  const std::set<std::string> sections = {"gpu",  "kernels", "nvlink",  "cnic", "snic",       "dram",
                                          "pcie", "qos",     "storage", "cost", "collectives"};
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
    // The new sections are there to be checked.
    for (const char* key : {"kernels", "nvlink", "storage", "collectives"}) CHECK(doc.contains(key));
    CHECK(doc.at("storage").contains("request_overhead_s"));
    CHECK(doc.at("gpu").contains("bf16_flops"));
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
             Contains("dram.bw_Bps: expected a number > 0, got \"500e9\""));
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

TEST_CASE("Hardware: zero or negative bandwidth, FLOP/s or HBM -> rejected with the field", "[unit]") {
  ScratchDir dir;
  const char* cases[][2] = {
      {R"({"cnic": {"bw_Bps": 0}})", "cnic.bw_Bps: expected a number > 0, got 0"},
      {R"({"snic": {"bw_Bps": -50e9}})", "snic.bw_Bps: expected a number > 0, got -5"},
      {R"({"dram": {"bw_Bps": 0}})", "dram.bw_Bps: expected a number > 0"},
      {R"({"gpu": {"flops": 0}})", "gpu.flops: expected a number > 0"},
      {R"({"gpu": {"hbm_bytes": -1}})", "gpu.hbm_bytes: expected a number > 0"},
      {R"({"gpu": {"hbm_bw_Bps": 0}})", "gpu.hbm_bw_Bps: expected a number > 0"},
      {R"({"pcie": {"bw_Bps": -1}})", "pcie.bw_Bps: expected a number >= 0"},
      {R"({"storage": {"bw_per_node_Bps": -1}})", "storage.bw_per_node_Bps: expected a number >= 0"},
      {R"({"link_latency_s": -1e-6})", "link_latency_s: expected a number >= 0"},
      {R"({"cnic": {"bw_Bps": 1e30}})", "cnic.bw_Bps: expected a number > 0"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    CHECK_THAT(error_of(load_text(dir, c[0])), Contains(c[1]));
  }
}

TEST_CASE("Hardware: PCIe and storage bandwidth 0 -> accepted as 'not modelled'", "[unit]") {
  ScratchDir dir;
  auto hw = load_text(dir, R"({"pcie": {"bw_Bps": 0}, "storage": {"bw_per_node_Bps": 0}})");
  REQUIRE(hw);
  CHECK(hw->pcie_bw_Bps == 0);
  CHECK(hw->storage_bw_per_node_Bps == 0);
}

TEST_CASE("Hardware: storage efficiency 0 or above 1 -> rejected, 0.85 accepted", "[unit]") {
  ScratchDir dir;
  CHECK_THAT(error_of(load_text(dir, R"({"storage": {"efficiency": 0}})")),
             Contains("storage.efficiency: expected a number > 0 and <= 1, got 0"));
  CHECK_THAT(error_of(load_text(dir, R"({"storage": {"efficiency": 1.5}})")),
             Contains("storage.efficiency: expected a number > 0 and <= 1, got 1.5"));
  auto hw = load_text(dir, R"({"storage": {"efficiency": 0.85}})");
  REQUIRE(hw);
  CHECK(hw->storage_efficiency == 0.85);
}

TEST_CASE("Hardware: kernel fractions, overheads, NVLink, storage overhead out of range -> rejected",
          "[unit]") {
  ScratchDir dir;
  const std::string file = dir.path("hw.json");
  const char* cases[][2] = {
      // Fractions of a peak: > 0 and <= 1.
      {R"({"kernels": {"gemm": 0}})", "kernels.gemm: expected a number > 0 and <= 1, got 0"},
      {R"({"kernels": {"gemm": 1.5}})", "kernels.gemm: expected a number > 0 and <= 1, got 1.5"},
      {R"({"kernels": {"prefill_attention": -0.3}})",
       "kernels.prefill_attention: expected a number > 0 and <= 1"},
      {R"({"kernels": {"attention_hbm": 2}})",
       "kernels.attention_hbm: expected a number > 0 and <= 1, got 2"},
      {R"({"kernels": {"indexer": 0}})", "kernels.indexer: expected a number > 0 and <= 1, got 0"},
      // Seconds: in [0, 1] (more is a unit typo).
      {R"({"kernels": {"decode_step_overhead_s": 2}})",
       "kernels.decode_step_overhead_s: expected a number >= 0 and <= 1, got 2"},
      {R"({"kernels": {"prefill_layer_overhead_s": -1}})",
       "kernels.prefill_layer_overhead_s: expected a number >= 0 and <= 1, got -1"},
      {R"({"kernels": {"mfu": 0.5}})", "kernels.mfu: unknown key"},
      {R"({"nvlink": {"bw_Bps": -160}})", "nvlink.bw_Bps: expected a number >= 0, got -160"},
      {R"({"nvlink": {"bw": 160e9}})", "nvlink.bw: unknown key"},
      {R"({"storage": {"request_overhead_s": -1}})",
       "storage.request_overhead_s: expected a number >= 0 and <= 1, got -1"},
      {R"({"storage": {"request_overhead_s": 45}})",
       "storage.request_overhead_s: expected a number >= 0 and <= 1, got 45"},
      {R"({"gpu": {"bf16_flops": -1}})", "gpu.bf16_flops: expected a number >= 0, got -1"},
      {R"({"kernels": {"prefill_efficiency": 0}})",
       "kernels.prefill_efficiency: expected a number > 0 and <= 1"},
      {R"({"kernels": {"decode_layer_overhead_s": 2}})",
       "kernels.decode_layer_overhead_s: expected a number >= 0 and <= 1, got 2"},
      // The collectives table: increasing whole EP sizes >= 2, one latency of at most 10 ms per size and
      // column (40 for 40 us would be a unit typo).
      {R"({"collectives": {"ep_gpus": [16, 8], "decode_dispatch_s": [1e-5, 1e-5], "decode_combine_s": [1e-5, 1e-5],
           "prefill_dispatch_s": [1e-5, 1e-5], "prefill_combine_s": [1e-5, 1e-5]}})",
       "collectives.ep_gpus: expected EP sizes >= 2 in increasing order, got [16,8]"},
      {R"({"collectives": {"ep_gpus": [8.5]}})", "collectives.ep_gpus: expected whole EP sizes, got [8.5]"},
      {R"({"collectives": {"ep_gpus": 8}})", "collectives.ep_gpus: expected an array of EP sizes >= 2"},
      {R"({"collectives": {"ep_gpus": [8, 16], "decode_dispatch_s": [1e-5, 40], "decode_combine_s": [1e-5, 1e-5],
           "prefill_dispatch_s": [1e-5, 1e-5], "prefill_combine_s": [1e-5, 1e-5]}})",
       "collectives.decode_dispatch_s: expected an array of latencies in seconds, >= 0 and <= 0.01, one per "
       "ep_gpus, got 40"},
      {R"({"collectives": {"ep_gpus": [8, 16], "decode_dispatch_s": [1e-5], "decode_combine_s": [1e-5, 1e-5],
           "prefill_dispatch_s": [1e-5, 1e-5], "prefill_combine_s": [1e-5, 1e-5]}})",
       "collectives.decode_dispatch_s: expected 2 latencies, one per ep_gpus, got [1e-05]"},
      {R"({"collectives": {"ep_gpus": [8, 16], "decode_dispatch_s": [1e-5, 1e-5], "decode_combine_s": [1e-5, 1e-5],
           "prefill_dispatch_s": [1e-5, 1e-5]}})",
       "collectives.prefill_combine_s: expected 2 latencies, one per ep_gpus, got nothing (the field is "
       "missing)"},
      {R"({"collectives": {"latency": [1]}})", "collectives.latency: unknown key"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    CHECK_THAT(error_of(load_text(dir, c[0])), Contains(file + ": " + c[1]));
  }
  // The edges are accepted: a fraction of exactly 1, overheads of 0 and 1 s, NVLink 0 (not modelled).
  auto hw =
      load_text(dir, R"({"kernels": {"gemm": 1, "decode_step_overhead_s": 1, "prefill_layer_overhead_s": 0},
                               "nvlink": {"bw_Bps": 0}, "storage": {"request_overhead_s": 0}})");
  REQUIRE(error_of(hw) == "");
  CHECK(hw->k_gemm == 1);
  CHECK(hw->decode_step_overhead_s == 1);
  CHECK(hw->nvlink_bw_Bps == 0);
  CHECK(hw->storage_request_overhead_s == 0);
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
