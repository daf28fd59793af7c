// Transport::cut and restore (a node failure, control/node_failures.h), timed by SimGrid on a 1P1D platform
// of one GPU per node. By hand: 10 GB from n0.g0 to n1's DRAM behind its CNIC, bounded to 1 GB/s, crosses
// n0's CNIC read, n1's CNIC write and n1's DRAM; node 1's links are cut at t = 2 s, so the wait returns an
// error at 2 s with 2 GB sent, and each of the three links carries 2 GB (byte conservation holds: the 8 GB
// never sent are withdrawn). A transfer to node 1 started at 2.5 s fails at once and sends nothing, while one
// within node 0 (D2H) runs as usual: 1 GB at 1 GB/s, 2.5 s to 3.5 s. Node 1's links are back at 4 s: 1 GB
// to it at 1 GB/s then takes 4 s to 5 s.
#include <catch2/catch.hpp>

#include "tests/support/sg_world.h"

namespace {

namespace sg4 = simgrid::s4u;

}  // namespace

TEST_CASE("Node cut: a transfer across a cut node fails with its bytes so far, others run, restore", "[sg]") {
  auto& e = sim::testing::make_engine();
  const auto h = sim::testing::one_gpu_1p1d();
  sim::testing::Metered m(h, 0.1, 0);
  m.ls.start_sampler();
  std::vector<int> node1;
  for (size_t i = 0; i < h.links.size(); ++i)
    if (h.links[i].node == 1) node1.push_back(static_cast<int>(i));
  REQUIRE(!node1.empty());
  double failed_at = -1, failed_sent = -1, refused_at = -1, refused_sent = -1, local_end = -1, back_end = -1;
  bool local_ok = false, back_ok = false;
  sim::engine::spawn("sender", h.nodes[0].gpus[0], [&]() {
    const auto x =
        m.t.start(h.nodes[0].gpus[0], h.nodes[1].bufs[0], 10e9, sim::transport::TrafficClass::kKv, 1e9);
    double sent = -1;
    const sim::Status st = m.t.wait(x, &sent);
    CHECK_FALSE(st.is_ok());
    failed_at = sg4::Engine::get_clock();
    failed_sent = sent;
  });
  sim::engine::spawn("cutter", h.nodes[0].dram, [&]() {
    sg4::this_actor::sleep_until(2.0);
    m.t.cut(node1, {});
    sg4::this_actor::sleep_until(2.5);
    // To the cut node: refused at once; within node 0: as usual.
    const auto refused =
        m.t.start(h.nodes[0].gpus[0], h.nodes[1].bufs[0], 1e9, sim::transport::TrafficClass::kKv, 1e9);
    const auto local =
        m.t.start(h.nodes[0].gpus[0], h.nodes[0].bufs[0], 1e9, sim::transport::TrafficClass::kKv, 1e9);
    double sent = -1;
    CHECK_FALSE(m.t.wait(refused, &sent).is_ok());
    refused_at = sg4::Engine::get_clock();
    refused_sent = sent;
    local_ok = m.t.wait(local).is_ok();
    local_end = sg4::Engine::get_clock();
    sg4::this_actor::sleep_until(4.0);
    m.t.restore(node1, {});
    back_ok = m.t.wait(m.t.start(h.nodes[0].gpus[0], h.nodes[1].bufs[0], 1e9,
                                 sim::transport::TrafficClass::kKv, 1e9))
                  .is_ok();
    back_end = sg4::Engine::get_clock();
  });
  e.run();
  m.ls.finish(sg4::Engine::get_clock());
  CHECK(failed_at == Approx(2.0));
  CHECK(failed_sent == Approx(2e9).epsilon(1e-6));
  CHECK(refused_at == Approx(2.5));
  CHECK(refused_sent == 0);
  CHECK(local_ok);
  CHECK(local_end == Approx(3.5).epsilon(1e-6));
  CHECK(back_ok);
  CHECK(back_end == Approx(5.0).epsilon(1e-6));
  const auto bytes = sim::testing::link_bytes(m.ls);
  // n0's CNIC read: 2 GB of the failed transfer, 1 GB of the local one, 1 GB after the restore; n1's CNIC
  // write and DRAM: 2 GB + 1 GB; nothing of the refused one anywhere.
  CHECK(bytes.at("n0.g0.cnic/read") == Approx(4e9).epsilon(1e-6));
  CHECK(bytes.at("n1.g0.cnic/write") == Approx(3e9).epsilon(1e-6));
  CHECK(bytes.at("n1.dram/shared") == Approx(3e9).epsilon(1e-6));
  CHECK(m.ls.conservation_error() <= 1e-9);
}
