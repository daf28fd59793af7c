// Transport rate bounds (transport.h: max_rate_Bps) and the EP exchange's route (a collective from a GPU to
// itself), timed by SimGrid on a 1P1D platform of one GPU per node whose CNIC carries B = 50 GB/s.
//
// By hand: 10 GB bounded to 1 GB/s on an otherwise idle 50 GB/s route take 10 / 1 = 10 s (unbounded:
// 10 / 50 = 0.2 s). An exchange of 10 GB from n0.g0 to itself leaves through n0's CNIC and comes back in:
// 10 GB on each direction of that CNIC, nothing on any other link; alone it takes 10 / 50 = 0.2 s, and
// bounded to 2 GB/s, 5 s. A bounded exchange cancelled at t = 1 s has sent 2 GB: cancel() returns them
// and the byte meter counts 2 GB on each CNIC direction, not the 10 GB first announced.
#include <catch2/catch.hpp>

#include "tests/support/sg_world.h"

namespace {

namespace sg4 = simgrid::s4u;
using sim::transport::TrafficClass;

struct Outcome {
  double end = -1;
  double sent = -1;
  std::map<std::string, double> bytes;
};

// Sends `bytes` from n0.g0 to `to(h)` in `cls`, bounded to `rate` (<= 0: none); cancels it at `cancel_at`
// (> 0) instead of waiting.
template <typename To>
Outcome run(To to, TrafficClass cls, double bytes, double rate, double cancel_at = -1) {
  auto& e = sim::testing::make_engine();
  const auto h = sim::testing::one_gpu_1p1d();
  sim::testing::Metered m(h, 0.1, 0);
  m.ls.start_sampler();
  Outcome out;
  sim::engine::spawn("sender", h.nodes[0].gpus[0], [&]() {
    const auto x = m.t.start(h.nodes[0].gpus[0], to(h), bytes, cls, rate);
    if (cancel_at > 0) {
      sg4::this_actor::sleep_until(cancel_at);
      out.sent = m.t.cancel(x);
    } else {
      REQUIRE(m.t.wait(x).is_ok());
    }
    out.end = sg4::Engine::get_clock();
  });
  e.run();
  m.ls.finish(sg4::Engine::get_clock());
  out.bytes = sim::testing::link_bytes(m.ls);
  return out;
}

auto to_de_buffer = [](const sim::platform::PlatformHandles& h) { return h.nodes[1].bufs[0]; };
auto to_itself = [](const sim::platform::PlatformHandles& h) { return h.nodes[0].gpus[0]; };

}  // namespace

// One platform per process (SimGrid's engine): one run per test case.
TEST_CASE("Rate bound: 10 GB bounded to 1 GB/s on a 50 GB/s route -> 10 s", "[sg]") {
  // Fails if the bound is dropped on the way to SimGrid's kernel (SimGrid 3.32's Comm::set_rate alone
  // does that for a host-to-host comm: the transfer would end at 0.2 s).
  CHECK(run(to_de_buffer, TrafficClass::kKv, 10e9, 1e9).end == Approx(10.0).epsilon(1e-6));
}

TEST_CASE("Rate bound: the same 10 GB unbounded -> 0.2 s", "[sg]") {
  CHECK(run(to_de_buffer, TrafficClass::kKv, 10e9, -1).end == Approx(0.2).epsilon(1e-6));
}

TEST_CASE("EP exchange: 10 GB from a GPU to itself -> 10 GB on each direction of its CNIC only, 0.2 s",
          "[sg]") {
  const Outcome alone = run(to_itself, TrafficClass::kCollective, 10e9, -1);
  CHECK(alone.end == Approx(0.2).epsilon(1e-6));
  REQUIRE(alone.bytes.size() > 2);
  for (const auto& [link, bytes] : alone.bytes) {
    INFO(link);
    CHECK(bytes == Approx(link.rfind("n0.g0.cnic", 0) == 0 ? 10e9 : 0).margin(1));
  }
}

TEST_CASE("EP exchange: 10 GB from a GPU to itself bounded to 2 GB/s -> 5 s", "[sg]") {
  CHECK(run(to_itself, TrafficClass::kCollective, 10e9, 2e9).end == Approx(5.0).epsilon(1e-6));
}

TEST_CASE("Cancel: a 2 GB/s exchange cancelled at 1 s -> 2 GB sent and metered, the rest withdrawn", "[sg]") {
  const Outcome o = run(to_itself, TrafficClass::kCollective, 10e9, 2e9, 1.0);
  CHECK(o.sent == Approx(2e9).epsilon(1e-6));
  double total = 0;
  for (const auto& [link, bytes] : o.bytes) total += bytes;
  CHECK(total == Approx(2 * 2e9).epsilon(1e-6));  // the CNIC's two directions
}
