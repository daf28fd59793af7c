// The paper's accounting (DualPath §4.2): on a P x D platform whose SNICs are all saturated by reads split
// with the paper's ideal balance, the bytes per second that SimGrid measures on PE CNIC read/write, DE CNIC
// read/write and DE DRAM equal the T_p / T_c expressions of cost::ideal_link_loads within 2%.
//
// Each PE-DE GPU pair streams its share of KV in chunks through a pipeline of stage actors:
//   PE path: storage(PE) -> PE dram | PE buf -> PE gpu | PE gpu -> DE buf | DE buf -> DE gpu
//   DE path: storage(DE) -> DE dram | DE buf -> PE gpu | DE buf -> DE gpu
// The rate is measured over the time the SNICs spend reading.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "sim/cost/bottleneck.h"
#include "tests/support/sg_world.h"

namespace sg4 = simgrid::s4u;

namespace {

constexpr int kP = 2, kD = 3, kG = 4, kChunks = 100;
constexpr double kReadSeconds = 2.0;  // nominal duration of the SNIC-saturating read phase

struct Stage {
  sg4::Host* from;
  sg4::Host* to;
};

double g_last_read = 0;
sim::transport::Transport* g_links = nullptr;

// Runs `stages` in order for kChunks chunks of `chunk` bytes; stage k+1 of chunk c starts once stage k of
// chunk c is done (semaphores), so the stages overlap like a pipeline.
void start_pipeline(const std::vector<Stage>& stages, double chunk) {
  std::vector<sg4::SemaphorePtr> ready;
  for (size_t k = 0; k < stages.size(); ++k) ready.push_back(sg4::Semaphore::create(0));
  for (size_t k = 0; k < stages.size(); ++k) {
    sim::engine::spawn("stage", stages[k].from, [stages, ready, k, chunk]() {
      for (int c = 0; c < kChunks; ++c) {
        if (k > 0) ready[k - 1]->acquire();
        (void)g_links->send(stages[k].from, stages[k].to, chunk);
        if (k == 0) g_last_read = std::max(g_last_read, sg4::Engine::get_clock());
        if (k + 1 < stages.size()) ready[k]->release();
      }
    });
  }
}

}  // namespace

TEST_CASE("Accounting: saturated SNICs with the ideal split -> link rates match T_p and T_c terms", "[sg]") {
  auto& e = sim::testing::make_engine();
  sim::config::HardwareSpec hw;
  hw.gpus_per_node = kG;
  auto h = sim::platform::build_platform(hw, kP, kD);
  sim::testing::Metered m(h, 0.1, 0);
  auto& ls = m.ls;
  g_links = &m.t;
  ls.start_sampler();
  const auto ideal = sim::cost::ideal_link_loads(kG, hw.cnic_bw_Bps, hw.snic_bw_Bps, hw.dram_bw_Bps, kP, kD);

  const double pe_bytes = ideal.t_p_Bps * kReadSeconds;  // per pair, PE path
  const double de_bytes = ideal.t_c_Bps * kReadSeconds;  // per pair, DE path
  for (int p = 0; p < kP; ++p)
    for (int i = 0; i < kG; ++i)
      for (int d = kP; d < kP + kD; ++d)
        for (int j = 0; j < kG; ++j) {
          const auto& pn = h.nodes[p];
          const auto& dn = h.nodes[d];
          start_pipeline({{pn.storage, pn.dram},
                          {pn.bufs[i], pn.gpus[i]},
                          {pn.gpus[i], dn.bufs[j]},
                          {dn.bufs[j], dn.gpus[j]}},
                         pe_bytes / kChunks);
          start_pipeline({{dn.storage, dn.dram}, {dn.bufs[j], pn.gpus[i]}, {dn.bufs[j], dn.gpus[j]}},
                         de_bytes / kChunks);
        }
  e.run();
  ls.finish(sg4::Engine::get_clock());
  // No link ever ran above its capacity in any window.
  for (const auto& r : ls.results()) CHECK(r.peak <= 1.0 + 1e-6);

  // Every SNIC was the bottleneck: the reads took the nominal time.
  CHECK(g_last_read == Approx(kReadSeconds).epsilon(0.02));
  // 2P3D g=4 lies inside the bottleneck-free range, so the pipelines drain within a few chunks.
  CHECK(sg4::Engine::get_clock() <= kReadSeconds * 1.05);

  auto bytes = sim::testing::link_bytes(ls);
  auto rate = [&](const std::string& key) { return bytes[key] / g_last_read; };
  for (int n = 0; n < kP + kD; ++n) {
    const bool pe = n < kP;
    INFO("node " << n);
    CHECK(rate(fmt::format("n{}.snic/in", n)) == Approx(hw.snic_bw_Bps).epsilon(0.02));
    CHECK(rate(fmt::format("n{}.dram/shared", n)) ==
          Approx(pe ? ideal.pe_dram.total_Bps : ideal.de_dram.total_Bps).epsilon(0.02));
    for (int j = 0; j < kG; ++j) {
      INFO("gpu " << j);
      CHECK(rate(fmt::format("n{}.g{}.cnic/read", n, j)) ==
            Approx(pe ? ideal.pe_cnic_read.total_Bps : ideal.de_cnic_read.total_Bps).epsilon(0.02));
      CHECK(rate(fmt::format("n{}.g{}.cnic/write", n, j)) ==
            Approx(pe ? ideal.pe_cnic_write.total_Bps : ideal.de_cnic_write.total_Bps).epsilon(0.02));
    }
  }
}
