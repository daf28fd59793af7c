// Hardware per role (hardware_prefill / hardware_decode): each node of the platform is built from its role's
// file. A 1P1D platform whose prefill file has 2 GPUs per node and the paper's bandwidths and whose decode
// file has 1 GPU per node and other bandwidths: every link, GPU host and the pace link of the decode node
// take the decode file's values, the prefill node's the prefill file's, and a transfer runs at its node's
// rate.
#include <catch2/catch.hpp>
#include <string>

#include "tests/support/sg_world.h"

namespace sg4 = simgrid::s4u;
using sim::platform::NodeRole;
using sim::platform::ResourceClass;

TEST_CASE("Role hardware: 1P1D with two files -> the decode node's links and GPUs are the decode file's",
          "[sg]") {
  auto& e = sim::testing::make_engine();
  sim::config::HardwareSpec prefill;  // the defaults: 50 GB/s CNIC and SNIC, 500 GB/s DRAM
  prefill.gpus_per_node = 2;
  prefill.gpu_flops = 1e15;
  sim::config::HardwareSpec decode;
  decode.gpus_per_node = 1;
  decode.gpu_flops = 3e14;
  decode.cnic_bw_Bps = 25e9;
  decode.snic_bw_Bps = 100e9;
  decode.dram_bw_Bps = 400e9;
  decode.pcie_bw_Bps = 60e9;             // PCIe links on the decode node only
  decode.storage_bw_per_node_Bps = 8e9;  // and a storage backend behind its SNIC
  const auto h = sim::platform::build_platform(prefill, decode, 1, 1);

  REQUIRE(h.nodes.size() == 2);
  CHECK(h.nodes[0].role == NodeRole::kPrefill);
  CHECK(h.nodes[1].role == NodeRole::kDecode);
  CHECK(h.gpus_on(0) == 2);
  CHECK(h.gpus_on(1) == 1);
  CHECK(h.gpus_of(NodeRole::kPrefill) == 2);
  CHECK(h.gpus_of(NodeRole::kDecode) == 1);
  CHECK(h.engines_of(NodeRole::kDecode).size() == 1);
  CHECK(h.nodes[1].stores.size() == 1);
  for (auto* g : h.nodes[0].gpus) CHECK(g->get_speed() == 1e15);
  CHECK(h.nodes[1].gpus[0]->get_speed() == 3e14);
  REQUIRE(h.nodes[1].exchange_pace != nullptr);
  CHECK(h.nodes[1].exchange_pace->get_bandwidth() == 25e9);

  int cnics[2] = {0, 0}, pcie[2] = {0, 0}, storage[2] = {0, 0};
  for (const auto& l : h.links) {
    const sim::config::HardwareSpec& hw = l.node == 0 ? prefill : decode;
    INFO("link " << l.link->get_name() << " of node " << l.node);
    double want = 0;
    switch (l.resource) {
      case ResourceClass::kCnic:
        want = hw.cnic_bw_Bps;
        ++cnics[l.node];
        break;
      case ResourceClass::kSnic:
        want = hw.snic_bw_Bps;
        break;
      case ResourceClass::kDram:
        want = hw.dram_bw_Bps;
        break;
      case ResourceClass::kPcie:
        want = hw.pcie_bw_Bps;
        ++pcie[l.node];
        break;
      case ResourceClass::kStorage:
        want = hw.storage_bw_per_node_Bps;
        ++storage[l.node];
        break;
      default:
        FAIL("unexpected resource class");
    }
    CHECK(l.bandwidth_Bps == want);
    CHECK(l.link->get_bandwidth() == want);
  }
  CHECK(cnics[0] == 4);  // 2 GPUs x (read, write)
  CHECK(cnics[1] == 2);  // 1 GPU
  CHECK(pcie[0] == 0);
  CHECK(pcie[1] == 4);  // GPU and host PCIe links, both directions
  CHECK(storage[0] == 0);
  CHECK(storage[1] == 2);

  // Storage reads of 10 GB into each node's DRAM at once: the prefill node's at its 50 GB/s SNIC (0.2 s),
  // the decode node's at its 8 GB/s storage backend (1.25 s); an H2D of 10 GB on the decode node at its
  // 25 GB/s CNIC (0.4 s).
  double done[3] = {0, 0, 0};
  for (int n = 0; n < 2; ++n)
    sim::engine::spawn("reader", h.nodes[n].storage, [&h, &done, n]() {
      sg4::Comm::sendto(h.nodes[n].storage, h.nodes[n].dram, 10'000'000'000ULL);
      done[n] = sg4::Engine::get_clock();
    });
  sim::engine::spawn("h2d", h.nodes[1].bufs[0], [&h, &done]() {
    sg4::Comm::sendto(h.nodes[1].bufs[0], h.nodes[1].gpus[0], 10'000'000'000ULL);
    done[2] = sg4::Engine::get_clock();
  });
  e.run();
  CHECK(done[0] == Approx(0.2).epsilon(1e-9));
  CHECK(done[1] == Approx(1.25).epsilon(1e-9));
  CHECK(done[2] == Approx(0.4).epsilon(1e-9));
}
