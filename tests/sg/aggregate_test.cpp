// Aggregated transfers (transport.h, wait_until): one comm that carries several requests' bytes back to back,
// each request released when the comm's progress passes its end; and the forward pass's per-layer loads,
// one comm per endpoint pair carrying every request's bytes of those layers (forward_pass.h). Timed by
// SimGrid on a 1P1D platform of one GPU per node whose CNIC carries B = 50 GB/s, the narrowest link of every
// route used here.
//
// By hand:
// - Alone: an aggregate of 3 GB + 7 GB from the PE GPU to the DE buffer. The first request is there at
//   3 / 50 = 0.06 s, the second with the comm's end at 10 / 50 = 0.2 s; each link of the route carries
//   3 + 7 = 10 GB, and no other link anything.
// - Shared: the same aggregate, and 1 GB more on the same route from t = 0.03 s. Max-min halves the rate
//   while both run: 1.5 GB by 0.03 s, then 25 GB/s each until the 1 GB ends at 0.07 s (the aggregate at 2.5
//   GB), then 50 GB/s again: the first request's 3 GB are there at 0.07 + 0.5 / 50 = 0.08 s, the last at 0.08
//   + 7 / 50 = 0.22 s. Released on the rate the comm had at its start, the first would leave at 0.06 s,
//   before its bytes; released with the comm's end, at 0.22 s.
// - A pass of 4 layers, 1 GB per layer from the PE's own buffer and 1 GB per layer from the DE buffer (two
//   requests' hit KV), both into the PE GPU: each layer's 2 GB enter through the PE CNIC's write direction,
//   0.04 s per layer. One layer at a time (sim.layer_group = 1), a layer's compute (0.01 s) starts when its
//   load has ended: at 0.04, 0.08, 0.12, 0.16 s (without the wait, layer 1 would start at 0.05 s). Fluid
//   (layer_group = 0): layers 0-2 from t = 0, the last when all 8 GB are in, at 0.16 s.
#include <catch2/catch.hpp>

#include "sim/engine/forward_pass.h"
#include "tests/support/sg_world.h"

namespace {

namespace sg4 = simgrid::s4u;

struct Released {
  std::vector<double> at;    // each request's release
  std::vector<double> sent;  // the comm's bytes sent at that moment
  std::map<std::string, double> bytes;
};

// An aggregate of `members` bytes from n0.g0 to n1's DE buffer; `other` > 0 bytes more on the same route
// from `other_at`.
Released run_aggregate(const std::vector<double>& members, double other, double other_at) {
  auto& e = sim::testing::make_engine();
  const auto h = sim::testing::one_gpu_1p1d();
  sim::testing::Metered m(h, 0.1, 0);
  m.ls.start_sampler();
  Released out;
  sg4::Host* from = h.nodes[0].gpus[0];
  sg4::Host* to = h.nodes[1].bufs[0];
  sim::engine::spawn("aggregate", from, [&]() {
    double total = 0;
    for (double b : members) total += b;
    const auto x = m.t.start(from, to, total);
    double end = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      end += members[i];
      if (i + 1 < members.size()) {
        REQUIRE(m.t.wait_until(x, end).is_ok());
        out.sent.push_back(m.t.sent(x));
      } else {
        REQUIRE(m.t.wait(x).is_ok());
        out.sent.push_back(total);
      }
      out.at.push_back(sg4::Engine::get_clock());
    }
  });
  if (other > 0)
    sim::engine::spawn("other", from, [&]() {
      sg4::this_actor::sleep_until(other_at);
      REQUIRE(m.t.wait(m.t.start(from, to, other)).is_ok());
    });
  e.run();
  m.ls.finish(sg4::Engine::get_clock());
  out.bytes = sim::testing::link_bytes(m.ls);
  return out;
}

// The compute of a pass: each layer takes t_layer; records when each layer starts.
class Recorded : public sim::engine::PassCompute {
 public:
  explicit Recorded(double t_layer) : t_layer_(t_layer) {}
  void run(double layers) override {
    note(layers);
    sg4::this_actor::sleep_for(layers * t_layer_);
  }
  void start(double layers) override {
    note(layers);
    end_ = sg4::Engine::get_clock() + layers * t_layer_;
  }
  void wait() override {
    if (end_ > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(end_);
  }
  std::vector<double> starts;  // one per layer

 private:
  void note(double layers) {
    for (int l = 0; l < static_cast<int>(layers); ++l)
      starts.push_back(sg4::Engine::get_clock() + l * t_layer_);
  }
  double t_layer_;
  double end_ = 0;
};

std::vector<double> run_pass(int layer_group) {
  auto& e = sim::testing::make_engine();
  const auto h = sim::testing::one_gpu_1p1d();
  sim::transport::Transport t(h);
  Recorded compute(0.01);
  sim::engine::Flows load, push;
  load[{h.nodes[0].bufs[0], h.nodes[0].gpus[0]}] += 1e9;  // one request's PE-path hit, per layer
  load[{h.nodes[1].bufs[0], h.nodes[0].gpus[0]}] += 1e9;  // another's DE-path hit, per layer
  sim::engine::spawn("pass", h.nodes[0].gpus[0], [&]() {
    sim::engine::PassPipeline(true, layer_group)
        .run(t, sim::engine::ForwardPass{load, push, 0.01, 4}, compute);
  });
  e.run();
  return compute.starts;
}

}  // namespace

// One platform per process (SimGrid's engine): one run per test case.
TEST_CASE("Aggregate: 3 GB + 7 GB alone -> released at 0.06 and 0.2 s, 10 GB on each link of the route",
          "[sg]") {
  const Released r = run_aggregate({3e9, 7e9}, 0, 0);
  REQUIRE(r.at.size() == 2);
  CHECK(r.at[0] == Approx(0.06).epsilon(1e-6));
  CHECK(r.at[1] == Approx(0.2).epsilon(1e-6));
  CHECK(r.sent[0] >= 3e9 - 0.5);
  int crossed = 0;
  for (const auto& [link, bytes] : r.bytes) {
    INFO(link);
    if (bytes > 0) {
      crossed++;
      CHECK(bytes == Approx(10e9).margin(1));
    }
  }
  CHECK(crossed >= 2);  // the PE CNIC's read and the DE CNIC's write at least
  CHECK(r.bytes.at("n0.g0.cnic/read") == Approx(10e9).margin(1));
  CHECK(r.bytes.at("n1.g0.cnic/write") == Approx(10e9).margin(1));
}

TEST_CASE("Aggregate: a request is never released before its bytes (a flow joins and leaves on its route)",
          "[sg]") {
  const Released r = run_aggregate({3e9, 7e9}, 1e9, 0.03);
  REQUIRE(r.at.size() == 2);
  CHECK(r.at[0] >= 0.08 - 1e-9);                 // not before its 3 GB are in
  CHECK(r.at[0] == Approx(0.08).margin(0.002));  // and not much after
  CHECK(r.sent[0] >= 3e9 - 0.5);
  CHECK(r.at[1] == Approx(0.22).epsilon(1e-6));
  CHECK(r.bytes.at("n0.g0.cnic/read") == Approx(11e9).margin(1));
}

TEST_CASE("Pass, one layer at a time: each layer's compute starts when both requests' bytes of it are in",
          "[sg]") {
  const std::vector<double> starts = run_pass(1);
  REQUIRE(starts.size() == 4);
  for (int l = 0; l < 4; ++l) {
    INFO("layer " << l);
    CHECK(starts[l] == Approx(0.04 * (l + 1)).epsilon(1e-6));
  }
}

TEST_CASE("Pass, fluid: the last layer's compute starts when all of the pass's load is in", "[sg]") {
  const std::vector<double> starts = run_pass(0);
  REQUIRE(starts.size() == 4);
  CHECK(starts[0] == Approx(0).margin(1e-9));
  CHECK(starts[3] == Approx(0.16).epsilon(1e-6));
}
