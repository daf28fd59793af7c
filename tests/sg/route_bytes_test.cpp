// The six routes of DESIGN.md on a 1P1D platform: a known number of bytes crosses exactly the links the
// paper's accounting says, in the right direction, and no other link carries a byte.
#include <catch2/catch.hpp>

#include "tests/support/sg_world.h"

namespace {

using sim::platform::PlatformHandles;
namespace sg4 = simgrid::s4u;
constexpr double kBytes = 3e9;

sim::config::HardwareSpec two_gpu_hw() {
  sim::config::HardwareSpec hw;
  hw.gpus_per_node = 2;
  return hw;
}

// Sends kBytes from `from(h)` to `to(h)` on a fresh 1P1D platform and checks the bytes on every link.
void check_route(const std::function<sg4::Host*(const PlatformHandles&)>& from,
                 const std::function<sg4::Host*(const PlatformHandles&)>& to,
                 const std::map<std::string, double>& expected) {
  auto& e = sim::testing::make_engine();
  PlatformHandles h = sim::platform::build_platform(two_gpu_hw(), 1, 1);
  sim::testing::Metered m(h, 0.01, 0);
  auto& ls = m.ls;
  ls.start_sampler();
  sg4::Host* src = from(h);
  sg4::Host* dst = to(h);
  sim::engine::spawn("sender", src, [&m, src, dst]() { (void)m.t.send(src, dst, kBytes); });
  e.run();
  ls.finish(sg4::Engine::get_clock());
  auto bytes = sim::testing::link_bytes(ls);
  // The transfer ran at full rate: every window of every link on its route stays within capacity.
  for (const auto& r : ls.results()) CHECK(r.peak <= 1.0 + 1e-9);
  for (const auto& [name, b] : bytes) {
    INFO("link " << name);
    auto it = expected.find(name);
    double want = it == expected.end() ? 0.0 : it->second;
    CHECK(b == Approx(want).margin(1.0));
  }
  for (const auto& [name, b] : expected) {
    INFO("expected link " << name);
    CHECK(bytes.count(name) == 1);
  }
}

}  // namespace

TEST_CASE("Route: storage read -> SNIC in then DRAM, nothing else", "[sg]") {
  check_route([](const PlatformHandles& h) { return h.nodes[0].storage; },
              [](const PlatformHandles& h) { return h.nodes[0].dram; },
              {{"n0.snic/in", kBytes}, {"n0.dram/shared", kBytes}});
}

TEST_CASE("Route: H2D -> DRAM, CNIC read, CNIC write of the GPU's own CNIC", "[sg]") {
  check_route([](const PlatformHandles& h) { return h.nodes[1].bufs[1]; },
              [](const PlatformHandles& h) { return h.nodes[1].gpus[1]; },
              {{"n1.dram/shared", kBytes}, {"n1.g1.cnic/read", kBytes}, {"n1.g1.cnic/write", kBytes}});
}

TEST_CASE("Route: D2H -> CNIC read, CNIC write, DRAM", "[sg]") {
  check_route([](const PlatformHandles& h) { return h.nodes[0].gpus[0]; },
              [](const PlatformHandles& h) { return h.nodes[0].bufs[0]; },
              {{"n0.dram/shared", kBytes}, {"n0.g0.cnic/read", kBytes}, {"n0.g0.cnic/write", kBytes}});
}

TEST_CASE("Route: GPU on A -> DRAM on B -> A CNIC read, B CNIC write, B DRAM", "[sg]") {
  check_route([](const PlatformHandles& h) { return h.nodes[0].gpus[1]; },
              [](const PlatformHandles& h) { return h.nodes[1].bufs[0]; },
              {{"n0.g1.cnic/read", kBytes}, {"n1.g0.cnic/write", kBytes}, {"n1.dram/shared", kBytes}});
}

TEST_CASE("Route: DRAM on B -> GPU on A -> B DRAM, B CNIC read, A CNIC write", "[sg]") {
  check_route([](const PlatformHandles& h) { return h.nodes[1].bufs[1]; },
              [](const PlatformHandles& h) { return h.nodes[0].gpus[0]; },
              {{"n1.dram/shared", kBytes}, {"n1.g1.cnic/read", kBytes}, {"n0.g0.cnic/write", kBytes}});
}

TEST_CASE("Route: persist -> DRAM then SNIC out", "[sg]") {
  check_route([](const PlatformHandles& h) { return h.nodes[1].dram; },
              [](const PlatformHandles& h) { return h.nodes[1].storage; },
              {{"n1.dram/shared", kBytes}, {"n1.snic/out", kBytes}});
}

TEST_CASE("Route: PCIe links, when modelled, carry GPU and host sides of an H2D", "[sg]") {
  auto& e = sim::testing::make_engine();
  auto hw = two_gpu_hw();
  hw.pcie_bw_Bps = 64e9;
  PlatformHandles h = sim::platform::build_platform(hw, 1, 1);
  sim::testing::Metered m(h, 1.0, 0);
  auto& ls = m.ls;
  sim::engine::spawn("sender", h.nodes[0].bufs[0],
                     [&h, &m]() { (void)m.t.send(h.nodes[0].bufs[0], h.nodes[0].gpus[0], kBytes); });
  e.run();
  ls.finish(sg4::Engine::get_clock());
  auto bytes = sim::testing::link_bytes(ls);
  CHECK(bytes["n0.g0.pcie_host/from_host"] == Approx(kBytes));
  CHECK(bytes["n0.g0.pcie_gpu/to_gpu"] == Approx(kBytes));
  CHECK(bytes["n0.g0.pcie_gpu/from_gpu"] == 0);
  CHECK(bytes["n0.g0.cnic/read"] == Approx(kBytes));
  CHECK(bytes["n0.g0.cnic/write"] == Approx(kBytes));
  // 3 GB over a 50 GB/s CNIC, the slowest link on the route.
  CHECK(sg4::Engine::get_clock() == Approx(kBytes / 50e9).epsilon(1e-6));
}

TEST_CASE("Route: storage read into a decode GPU's HBM (de_buffer = hbm) -> SNIC in, DRAM once, CNIC write",
          "[sg]") {
  check_route([](const PlatformHandles& h) { return h.nodes[1].stores[1]; },
              [](const PlatformHandles& h) { return h.nodes[1].gpus[1]; },
              {{"n1.snic/in", kBytes}, {"n1.dram/shared", kBytes}, {"n1.g1.cnic/write", kBytes}});
}

TEST_CASE("Route: GPU on A -> GPU on B (de_buffer = hbm) -> A CNIC read, B CNIC write, no DRAM", "[sg]") {
  check_route([](const PlatformHandles& h) { return h.nodes[0].gpus[0]; },
              [](const PlatformHandles& h) { return h.nodes[1].gpus[1]; },
              {{"n0.g0.cnic/read", kBytes}, {"n1.g1.cnic/write", kBytes}});
}

TEST_CASE(
    "Route: storage read into a decode GPU's HBM with PCIe -> switch j's host link, GPU link in, no "
    "CNIC read",
    "[sg]") {
  auto& e = sim::testing::make_engine();
  auto hw = two_gpu_hw();
  hw.pcie_bw_Bps = 64e9;
  PlatformHandles h = sim::platform::build_platform(hw, 1, 1);
  CHECK(h.nodes[0].stores.empty());  // prefill nodes have no DE buffer
  REQUIRE(h.nodes[1].stores.size() == 2);
  sim::testing::Metered m(h, 1.0, 0);
  auto& ls = m.ls;
  sim::engine::spawn("sender", h.nodes[1].stores[1],
                     [&h, &m]() { (void)m.t.send(h.nodes[1].stores[1], h.nodes[1].gpus[1], kBytes); });
  e.run();
  ls.finish(sg4::Engine::get_clock());
  auto bytes = sim::testing::link_bytes(ls);
  CHECK(bytes["n1.snic/in"] == Approx(kBytes));
  CHECK(bytes["n1.dram/shared"] == Approx(kBytes));
  CHECK(bytes["n1.g1.pcie_host/from_host"] == Approx(kBytes));
  CHECK(bytes["n1.g1.pcie_gpu/to_gpu"] == Approx(kBytes));
  CHECK(bytes["n1.g1.cnic/write"] == Approx(kBytes));
  CHECK(bytes["n1.g1.cnic/read"] == 0);
  CHECK(bytes["n1.g0.pcie_host/from_host"] == 0);
  // 3 GB over the 50 GB/s SNIC and CNIC, the slowest links on the route.
  CHECK(sg4::Engine::get_clock() == Approx(kBytes / 50e9).epsilon(1e-6));
}
