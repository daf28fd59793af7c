// network.qos = priority: the traffic classes share a link by the hardware's weights, through SimGrid's
// own max-min solver (platform/builder.cpp), and a class alone takes the whole link. One collective
// (GPU n0.g0 -> GPU n1.g0) and one KV transfer (GPU n0.g0 -> DRAM behind n1.g0) share both CNIC
// directions on their way; each CNIC carries B = 50 GB/s.
//
// By hand, with weights 99:1: the collective runs at 0.99 B and the KV transfer at 0.01 B while both are
// active. The collective's 49.5 GB end at 49.5 / 49.5 = 1.0 s, having let 0.5 GB of KV through; the
// KV transfer's remaining 25 GB then take the whole link: 25 / 50 = 0.5 s more, so it ends at 1.5 s.
// Without QoS the two share equally (25 GB/s each): the KV transfer's 25.5 GB end at 1.02 s and the
// collective's remaining 24 GB at 1.02 + 0.48 = 1.5 s, so the collective ends last instead of first.
#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/support/sg_world.h"

namespace {

namespace sg4 = simgrid::s4u;
using sim::transport::TrafficClass;

constexpr double kQosB = 50e9;
constexpr double kCollectiveBytes = 0.99 * kQosB * 1.0;
constexpr double kKvBytes = 0.01 * kQosB * 1.0 + 25e9;

struct Ends {
  double collective = -1;
  double kv = -1;
  std::map<std::string, double> bytes;
};

// Runs the two transfers (or one of them, with the other's size 0) and returns when each ended.
Ends run_qos(bool priority, double collective_bytes, double kv_bytes) {
  auto& e = sim::testing::make_engine();
  const auto h = sim::testing::one_gpu_1p1d(priority);  // qos weights 99:1 by default, the paper's
  sim::testing::Metered m(h, 0.1, 0);
  m.ls.start_sampler();
  Ends ends;
  sim::engine::spawn("collective", h.nodes[0].gpus[0], [&]() {
    const auto st =
        m.t.send(h.nodes[0].gpus[0], h.nodes[1].gpus[0], collective_bytes, TrafficClass::kCollective);
    REQUIRE(st.is_ok());
    ends.collective = sg4::Engine::get_clock();
  });
  sim::engine::spawn("kv", h.nodes[0].gpus[0], [&]() {
    const auto st = m.t.send(h.nodes[0].gpus[0], h.nodes[1].bufs[0], kv_bytes, TrafficClass::kKv);
    REQUIRE(st.is_ok());
    ends.kv = sg4::Engine::get_clock();
  });
  e.run();
  m.ls.finish(sg4::Engine::get_clock());
  ends.bytes = sim::testing::link_bytes(m.ls);
  return ends;
}

}  // namespace

TEST_CASE("QoS priority: collectives and KV share a CNIC 99:1 while both are active", "[sg]") {
  const Ends ends = run_qos(true, kCollectiveBytes, kKvBytes);
  // The QoS tags add at most 2 us of latency per transfer.
  CHECK(ends.collective == Approx(1.0).margin(1e-5));
  CHECK(ends.kv == Approx(1.5).margin(1e-5));
  // The tags are not resources: the CNICs carry both transfers' bytes, nothing else is metered.
  CHECK(ends.bytes.at("n0.g0.cnic/read") == Approx(kCollectiveBytes + kKvBytes));
  CHECK(ends.bytes.at("n1.g0.cnic/write") == Approx(kCollectiveBytes + kKvBytes));
  CHECK(ends.bytes.at("n1.dram/shared") == Approx(kKvBytes));
}

TEST_CASE("QoS none: the same two transfers share the CNIC equally (negative control)", "[sg]") {
  const Ends ends = run_qos(false, kCollectiveBytes, kKvBytes);
  CHECK(ends.kv == Approx(1.02).margin(1e-6));
  CHECK(ends.collective == Approx(1.5).margin(1e-6));
}

TEST_CASE("QoS priority: KV alone takes the whole CNIC", "[sg]") {
  const Ends ends = run_qos(true, 0, 25e9);
  CHECK(ends.kv == Approx(0.5).margin(1e-5));
}

// Every KV route carries the same tag latency (its source's tag), so KV flows of different kinds still
// share a link max-min fairly among themselves. Three 10 GB KV transfers of three kinds cross the read
// direction of n0.g0's CNIC: DRAM to DRAM (behind n0.g0 -> behind n1.g0), an H2D copy (DRAM behind n0.g0 ->
// GPU n0.g0) and a push (GPU n0.g0 -> DRAM behind n1.g0). By hand: 50 / 3 GB/s each, all end at 30 / 50 = 0.6
// s. A route weighted differently would not: with two tags instead of one, the others would take twice its
// share (20 GB/s each, it 10) and it would end last, at 0.6 s, the others at 0.5 s; with none (penalty 1
// against their 2e-6 s) it would wait for the other two (0.4 s) and end alone at 0.6 s while they end at 0.4
// s.
TEST_CASE("QoS priority: KV transfers of three kinds share a CNIC equally", "[sg]") {
  auto& e = sim::testing::make_engine();
  const auto h = sim::testing::one_gpu_1p1d(true);
  sim::testing::Metered m(h, 0.1, 0);
  const auto& n0 = h.nodes[0];
  const auto& n1 = h.nodes[1];
  const std::pair<sg4::Host*, sg4::Host*> kinds[3] = {
      {n0.bufs[0], n1.bufs[0]}, {n0.bufs[0], n0.gpus[0]}, {n0.gpus[0], n1.bufs[0]}};
  std::vector<double> ends(3, -1);
  for (int k = 0; k < 3; ++k)
    sim::engine::spawn("kv", kinds[k].first, [&, k]() {
      REQUIRE(m.t.send(kinds[k].first, kinds[k].second, 10e9, TrafficClass::kKv).is_ok());
      ends[k] = sg4::Engine::get_clock();
    });
  e.run();
  for (int k = 0; k < 3; ++k) {
    INFO("transfer kind " << k);
    CHECK(ends[k] == Approx(0.6).margin(1e-5));
  }
}

// One tag per flow (platform/builder.cpp): a route crosses its source's tag and no other, so each flow
// has one tag constraint in the max-min system, not two. Its latency is the class's whole penalty: 1.98 us
// for KV and 20 ns for the collectives at 99:1 (2 x 1e-8 s x 99 and 2 x 1e-8 s x 1); a route with its
// destination's tag as well would have twice that, one with none would have 0.
TEST_CASE("QoS priority: every route crosses one tag, its source's, whose latency is the class's penalty",
          "[sg]") {
  sim::testing::make_engine();
  const auto h = sim::testing::one_gpu_1p1d(true);
  const auto& n0 = h.nodes[0];
  const auto& n1 = h.nodes[1];
  struct Case {
    sg4::Host* from;
    sg4::Host* to;
    const char* tag;
    double penalty_s;
  };
  const Case cases[] = {{n0.gpus[0], n1.bufs[0], "n0.g0.qos", 1.98e-6},       // a push to a DE buffer
                        {n1.bufs[0], n0.gpus[0], "n1.g0.buf.qos", 1.98e-6},   // the reverse direction
                        {n0.storage, n0.dram, "n0.storage.qos", 1.98e-6},     // a storage read
                        {n0.eps[0], n1.eps[0], "n0.g0.ep.qos", 2e-8},         // a collective
                        {n0.exchange, n0.exchange, "n0.ex.loop.qos", 2e-8}};  // a node-wide exchange
  for (const Case& c : cases) {
    INFO(c.from->get_name() << " -> " << c.to->get_name());
    std::vector<sg4::Link*> links;
    double latency = 0;
    c.from->route_to(c.to, links, &latency);
    std::vector<std::string> tags;
    for (auto* l : links)
      if (std::find(h.qos_tags.begin(), h.qos_tags.end(), l) != h.qos_tags.end())
        tags.push_back(l->get_name());
    REQUIRE(tags.size() == 1);
    CHECK(tags[0] == c.tag);
    CHECK(latency == Approx(c.penalty_s).epsilon(1e-12));  // the other links have no latency
  }
}
