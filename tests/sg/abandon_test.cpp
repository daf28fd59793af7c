// Transport::abandon (the end of a stopped run's drain, control/watchdog.cpp) with an actor waiting for the
// transfer it ends, on a 1P1D platform of one GPU per node. By hand: 10 GB from n0.g0 to n1's DRAM behind
// its CNIC, bounded to 1 GB/s, is abandoned at t = 2 s: its waiter gets an error at 2 s (the comm it waits
// for stays alive while it waits), 2 GB stay on each link of its route and the 8 GB never sent are
// withdrawn. Its slot is freed once: afterwards nothing is in flight, and two transfers started at 2 s get
// two slots and run as usual, 1 GB each at 1 GB/s over different routes, both done at 3 s. (A waiter that
// closed the abandoned slot again would hand both new transfers the same slot.)
#include <catch2/catch.hpp>

#include "tests/support/sg_world.h"

namespace {

namespace sg4 = simgrid::s4u;

}  // namespace

TEST_CASE("Abandon: a waited transfer ends with an error and its bytes so far, its slot freed once", "[sg]") {
  auto& e = sim::testing::make_engine();
  const auto h = sim::testing::one_gpu_1p1d();
  sim::testing::Metered m(h, 0.1, 0);
  double waiter_at = -1, waiter_sent = -1, first_end = -1, second_end = -1;
  bool waiter_ok = true, first_ok = false, second_ok = false;
  size_t in_flight_after = 99;
  sim::transport::Transport::Handle first = 0, second = 0;
  sim::engine::spawn("waiter", h.nodes[0].gpus[0], [&]() {
    const auto x =
        m.t.start(h.nodes[0].gpus[0], h.nodes[1].bufs[0], 10e9, sim::transport::TrafficClass::kKv, 1e9);
    double sent = -1;
    waiter_ok = m.t.wait(x, &sent).is_ok();
    waiter_at = sg4::Engine::get_clock();
    waiter_sent = sent;
  });
  sim::engine::spawn("stopper", h.nodes[0].dram, [&]() {
    sg4::this_actor::sleep_until(2.0);
    m.t.abandon();
    sg4::this_actor::sleep_for(0);  // the waiter runs
    in_flight_after = m.t.in_flight();
    first = m.t.start(h.nodes[0].gpus[0], h.nodes[1].bufs[0], 1e9, sim::transport::TrafficClass::kKv, 1e9);
    second = m.t.start(h.nodes[0].gpus[0], h.nodes[0].bufs[0], 1e9, sim::transport::TrafficClass::kKv, 1e9);
    first_ok = m.t.wait(first).is_ok();
    first_end = sg4::Engine::get_clock();
    second_ok = m.t.wait(second).is_ok();
    second_end = sg4::Engine::get_clock();
  });
  e.run();
  m.ls.finish(sg4::Engine::get_clock());
  CHECK_FALSE(waiter_ok);
  CHECK(waiter_at == Approx(2.0));
  CHECK(waiter_sent == 0);  // abandoned: what it sent was reported by abandon(), none of it by the wait
  CHECK(in_flight_after == 0);
  CHECK(first != second);
  CHECK(first_ok);
  CHECK(second_ok);
  CHECK(first_end == Approx(3.0).epsilon(1e-6));
  CHECK(second_end == Approx(3.0).epsilon(1e-6));
  const auto bytes = sim::testing::link_bytes(m.ls);
  // n0's CNIC read: 2 GB of the abandoned transfer and 1 GB of each new one (the local one reaches node 0's
  // buffer through it too); n1's CNIC write and DRAM: 2 GB + 1 GB.
  CHECK(bytes.at("n0.g0.cnic/read") == Approx(4e9).epsilon(1e-6));
  CHECK(bytes.at("n1.g0.cnic/write") == Approx(3e9).epsilon(1e-6));
  CHECK(bytes.at("n1.dram/shared") == Approx(3e9).epsilon(1e-6));
  CHECK(m.ls.conservation_error() <= 1e-9);
}
