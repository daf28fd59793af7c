// Bandwidth sharing comes from SimGrid's max-min solver: two flows on one SNIC get half each; a flow that
// crosses DRAM and a CNIC runs at the smaller of the two.
#include <catch2/catch.hpp>
#include <vector>

#include "tests/support/sg_world.h"

namespace sg4 = simgrid::s4u;

TEST_CASE("Sharing: two reads on one SNIC -> each gets half its bandwidth", "[sg]") {
  auto& e = sim::testing::make_engine();
  sim::config::HardwareSpec hw;
  hw.gpus_per_node = 1;
  auto h = sim::platform::build_platform(hw, 1, 1);
  std::vector<double> done(2, 0);
  for (int i = 0; i < 2; ++i) {
    sim::engine::spawn("reader", h.nodes[0].storage, [&h, &done, i]() {
      sg4::Comm::sendto(h.nodes[0].storage, h.nodes[0].dram, 10'000'000'000ULL);
      done[i] = sg4::Engine::get_clock();
    });
  }
  e.run();
  // 2 x 10 GB through one 50 GB/s SNIC: both finish at 0.4 s (alone, one would take 0.2 s).
  CHECK(done[0] == Approx(0.4).epsilon(0.01));
  CHECK(done[1] == Approx(0.4).epsilon(0.01));
}

TEST_CASE("Sharing: DRAM + CNIC route -> limited by the smaller bandwidth", "[sg]") {
  auto& e = sim::testing::make_engine();
  sim::config::HardwareSpec hw;
  hw.gpus_per_node = 1;
  hw.dram_bw_Bps = 20e9;  // DRAM slower than the 50 GB/s CNIC
  auto h = sim::platform::build_platform(hw, 1, 1);
  double done = 0;
  sim::engine::spawn("h2d", h.nodes[0].bufs[0], [&h, &done]() {
    sg4::Comm::sendto(h.nodes[0].bufs[0], h.nodes[0].gpus[0], 10'000'000'000ULL);
    done = sg4::Engine::get_clock();
  });
  e.run();
  CHECK(done == Approx(10e9 / 20e9).epsilon(0.01));
}
