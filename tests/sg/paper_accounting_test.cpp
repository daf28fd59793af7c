// The paper's accounting (DualPath §4.2, PAPER.md §4.5), derived by hand below for this test's platform:
// on a P x D platform whose SNICs are all saturated by reads split with the paper's ideal balance, the
// bytes per second SimGrid measures on each SNIC, PE/DE CNIC read/write and PE/DE DRAM equal the paper's
// terms within 2%. The expected rates are numbers written here, not outputs of sim/cost.
//
// Each PE-DE GPU pair streams its share of KV in chunks through a pipeline of stage actors:
//   PE path: storage(PE) -> PE dram | PE buf -> PE gpu | PE gpu -> DE buf | DE buf -> DE gpu
//   DE path: storage(DE) -> DE dram | DE buf -> PE gpu | DE buf -> DE gpu
// The rate is measured over the time the SNICs spend reading.
//
// Platform: P = 2 prefill and D = 3 decode nodes of g = 4 GPUs; B = 50 GB/s per CNIC direction, sB = 50
// GB/s per SNIC direction (s = 1), M = 500 GB/s of DRAM per node (reads + writes). All rates in GB/s.
// Per (PE GPU, DE GPU) pair, with every SNIC saturated and its bandwidth shared evenly:
//   T_p = sB / (D g^2) = 50 / 48 = 1.0416667  (a PE node's SNIC feeds g x D g = 48 pairs)
//   T_c = sB / (P g^2) = 50 / 32 = 1.5625     (a DE node's SNIC feeds g x P g = 32 pairs)
// Bytes each stage puts on each link class, per byte of the pair's share (handles.h routes):
//   PE path  storage -> PE dram    PE SNIC in, PE DRAM
//            PE buf -> PE gpu      PE DRAM, PE CNIC read, PE CNIC write     (3)(4) H2D
//            PE gpu -> DE buf      PE CNIC read, DE CNIC write, DE DRAM     (5)(6)(7)
//            DE buf -> DE gpu      DE DRAM, DE CNIC read, DE CNIC write     (8)(9) H2D
//   DE path  storage -> DE dram    DE SNIC in, DE DRAM
//            DE buf -> PE gpu      DE DRAM, DE CNIC read, PE CNIC write     (3)(4)(5) RDMA
//            DE buf -> DE gpu      DE DRAM, DE CNIC read, DE CNIC write     (6)(7) H2D
// Summed over the pairs crossing one link (a PE GPU pairs with D g = 12 DE GPUs, a DE GPU with P g = 8):
//   PE CNIC read   2 T_p x 12              = 25                          (1)  2sB/g
//   PE CNIC write  (T_p + T_c) x 12        = 12.5 + 18.75 = 31.25        (2)  sB/g (1 + D/P)
//   DE CNIC read   (T_p + 2 T_c) x 8       = 8.3333 + 25 = 33.3333       (4)  sB/g (P/D + 2)
//   DE CNIC write  (2 T_p + T_c) x 8       = 16.6667 + 12.5 = 29.1667    (6)  sB/g (2 P/D + 1)
//   PE DRAM        2 T_p x 48              = 100                         (text) 2sB
//   DE DRAM        2 T_p x 32 + 3 T_c x 32 = 66.6667 + 150 = 216.6667    (8)  (3 + 2 P/D) sB
//   SNIC in        T_p x 48 = T_c x 32     = 50                          sB, on every node
// All are below B = 50 and M = 500: 2P3D with g = 4 lies inside the bottleneck-free range.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <vector>

#include "tests/support/sg_world.h"

namespace sg4 = simgrid::s4u;

namespace {

constexpr int kP = 2, kD = 3, kG = 4, kChunks = 100;
constexpr double kB = 50e9, kSB = 50e9, kM = 500e9;  // B/s
constexpr double kReadSeconds = 2.0;                 // nominal duration of the SNIC-saturating read phase
constexpr double kTp = 50e9 / 48, kTc = 50e9 / 32;   // B/s per pair
constexpr double kSnicIn = 50e9;

// Hand-derived rates per link class, B/s.
struct Rates {
  double pe_cnic_read, pe_cnic_write, de_cnic_read, de_cnic_write, pe_dram, de_dram;
};

struct Stage {
  sg4::Host* from;
  sg4::Host* to;
};

double g_last_read = 0;
sim::transport::Transport* g_links = nullptr;

// The one call into the transfer layer: moves `bytes` from `from` to `to` and returns when they arrived.
void move_bytes(sg4::Host* from, sg4::Host* to, double bytes) {
  const sim::Status st = g_links->send(from, to, bytes);
  CHECK(st.is_ok());
}

// Runs `stages` in order for kChunks chunks of `chunk` bytes; stage k+1 of chunk c starts once stage k of
// chunk c is done (semaphores), so the stages overlap like a pipeline.
void start_pipeline(const std::vector<Stage>& stages, double chunk) {
  std::vector<sg4::SemaphorePtr> ready;
  for (size_t k = 0; k < stages.size(); ++k) ready.push_back(sg4::Semaphore::create(0));
  for (size_t k = 0; k < stages.size(); ++k) {
    sim::engine::spawn("stage", stages[k].from, [stages, ready, k, chunk]() {
      for (int c = 0; c < kChunks; ++c) {
        if (k > 0) ready[k - 1]->acquire();
        move_bytes(stages[k].from, stages[k].to, chunk);
        if (k == 0) g_last_read = std::max(g_last_read, sg4::Engine::get_clock());
        if (k + 1 < stages.size()) ready[k]->release();
      }
    });
  }
}

// Starts the pipelines of one PE GPU (pn, i) - DE GPU (dn, j) pair: PE path chunks, DE path chunks.
using PairRoutes =
    std::function<void(const sim::platform::NodeHandles& pn, int i, const sim::platform::NodeHandles& dn,
                       int j, double pe_chunk, double de_chunk)>;

// Every pair streams its share (T_p, T_c for kReadSeconds) along `routes`; then every SNIC must have been
// the bottleneck and every link class must carry `want`.
void check_accounting(const PairRoutes& routes, const Rates& want) {
  auto& e = sim::testing::make_engine();
  sim::config::HardwareSpec hw;
  hw.gpus_per_node = kG;
  hw.cnic_bw_Bps = kB;
  hw.snic_bw_Bps = kSB;
  hw.dram_bw_Bps = kM;
  auto h = sim::platform::build_platform(hw, kP, kD);
  sim::testing::Metered m(h, 0.1, 0);
  auto& ls = m.ls;
  g_links = &m.t;
  ls.start_sampler();
  for (int p = 0; p < kP; ++p)
    for (int i = 0; i < kG; ++i)
      for (int d = kP; d < kP + kD; ++d)
        for (int j = 0; j < kG; ++j)
          routes(h.nodes[p], i, h.nodes[d], j, kTp * kReadSeconds / kChunks, kTc * kReadSeconds / kChunks);
  e.run();
  ls.finish(sg4::Engine::get_clock());
  // No link ever ran above its capacity in any window.
  for (const auto& r : ls.results()) CHECK(r.peak <= 1.0 + 1e-6);

  // Every SNIC was the bottleneck: the reads took the nominal time.
  CHECK(g_last_read == Approx(kReadSeconds).epsilon(0.02));
  // Every other link stays below capacity, so the pipelines drain within a few chunks.
  CHECK(sg4::Engine::get_clock() <= kReadSeconds * 1.05);

  auto bytes = sim::testing::link_bytes(ls);
  auto rate = [&](const std::string& key) { return bytes[key] / g_last_read; };
  for (int n = 0; n < kP + kD; ++n) {
    const bool pe = n < kP;
    INFO("node " << n);
    CHECK(rate(fmt::format("n{}.snic/in", n)) == Approx(kSnicIn).epsilon(0.02));
    CHECK(rate(fmt::format("n{}.dram/shared", n)) == Approx(pe ? want.pe_dram : want.de_dram).epsilon(0.02));
    for (int j = 0; j < kG; ++j) {
      INFO("gpu " << j);
      CHECK(rate(fmt::format("n{}.g{}.cnic/read", n, j)) ==
            Approx(pe ? want.pe_cnic_read : want.de_cnic_read).epsilon(0.02));
      CHECK(rate(fmt::format("n{}.g{}.cnic/write", n, j)) ==
            Approx(pe ? want.pe_cnic_write : want.de_cnic_write).epsilon(0.02));
    }
  }
}

}  // namespace

TEST_CASE(
    "Accounting: 2P3D g=4, saturated SNICs with the ideal split -> link rates match the hand-derived terms",
    "[sg]") {
  check_accounting(
      [](const auto& pn, int i, const auto& dn, int j, double pe_chunk, double de_chunk) {
        start_pipeline({{pn.storage, pn.dram},
                        {pn.bufs[i], pn.gpus[i]},
                        {pn.gpus[i], dn.bufs[j]},
                        {dn.bufs[j], dn.gpus[j]}},
                       pe_chunk);
        start_pipeline({{dn.storage, dn.dram}, {dn.bufs[j], pn.gpus[i]}, {dn.bufs[j], dn.gpus[j]}}, de_chunk);
      },
      {25e9, 31.25e9, 100e9 / 3, 87.5e9 / 3, 100e9, 650e9 / 3});
}

// The accounting of inequalities (H1)-(H7) (the DE buffer in HBM, sim/README.md), derived by hand below for
// the platform above: on 2P3D with g = 4 whose SNICs are all saturated by reads
// split with the paper's ideal balance, the bytes per second SimGrid measures on each SNIC, PE/DE CNIC
// read/write and PE/DE DRAM equal the hand-derived terms within 2%. The expected rates are numbers written
// here, not outputs of sim/cost.
//
// Each PE-DE GPU pair streams its share of KV in chunks through a pipeline of stage actors:
//   PE path: storage(PE) -> PE dram | PE buf -> PE gpu | PE gpu -> DE gpu
//   DE path: storage -> DE gpu through the DE DRAM (store_j -> gpu_j) | DE gpu -> PE gpu
//
// Platform: P = 2, D = 3 nodes of g = 4 GPUs; B = 50 GB/s per CNIC direction, sB = 50 GB/s per SNIC
// direction (s = 1), M = 500 GB/s of DRAM per node. All rates in GB/s.
//   T_p = sB / (D g^2) = 50 / 48 = 1.0416667,  T_c = sB / (P g^2) = 50 / 32 = 1.5625
// Bytes each stage puts on each link class, per byte of the pair's share (handles.h routes):
//   PE path  storage -> PE dram    PE SNIC in, PE DRAM
//            PE buf -> PE gpu      PE DRAM, PE CNIC read, PE CNIC write     (H2D)
//            PE gpu -> DE gpu      PE CNIC read, DE CNIC write
//   DE path  storage -> DE gpu     DE SNIC in, DE DRAM, DE CNIC write
//            DE gpu -> PE gpu      DE CNIC read, PE CNIC write
// Summed over the pairs crossing one link (a PE GPU pairs with D g = 12 DE GPUs, a DE GPU with P g = 8):
//   PE CNIC read   2 T_p x 12              = 25                          (H1)  2sB/g
//   PE CNIC write  (T_p + T_c) x 12        = 12.5 + 18.75 = 31.25        (H2)  sB/g (1 + D/P)
//   DE CNIC read   T_c x 8                 = 12.5                        (H3)  sB/g
//   DE CNIC write  (T_p + T_c) x 8         = 8.3333 + 12.5 = 20.8333     (H4)  sB/g (1 + P/D)
//   PE DRAM        2 T_p x 48              = 100                         (H6)  2sB
//   DE DRAM        T_c x 32                = 50                          (H5)  sB
//   SNIC in        T_p x 48 = T_c x 32     = 50                          sB, on every node
// With the DE buffer in DRAM (above) the DE CNIC read was 33.3333, the write 29.1667 and
// the DE DRAM 216.6667.
TEST_CASE(
    "Accounting hbm: 2P3D g=4, saturated SNICs with the ideal split, DE buffer in HBM -> link rates match "
    "the hand-derived terms",
    "[sg]") {
  check_accounting(
      [](const auto& pn, int i, const auto& dn, int j, double pe_chunk, double de_chunk) {
        start_pipeline({{pn.storage, pn.dram}, {pn.bufs[i], pn.gpus[i]}, {pn.gpus[i], dn.gpus[j]}}, pe_chunk);
        start_pipeline({{dn.stores[j], dn.gpus[j]}, {dn.gpus[j], pn.gpus[i]}}, de_chunk);
      },
      {25e9, 31.25e9, 12.5e9, 62.5e9 / 3, 100e9, 50e9});
}
