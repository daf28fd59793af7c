// cost::UnloadedLatency: a turn alone on an idle cluster, by hand on the I/O fixture of tests/e2e (compute
// takes nanoseconds there, so a turn's unloaded TTFT is its transfers alone). tests/e2e/slo_relative_test.cpp
// checks the same figures against the simulation of a lone agent.
#include "sim/cost/unloaded.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

sim::config::ScenarioConfig io_1p1d(const std::vector<std::string>& sets) {
  auto sc = sim::config::load_scenario(std::string(DPSIM_SOURCE_DIR) + "/tests/e2e/cases/io_1p1d.json", sets);
  INFO((sc ? std::string() : sc.status().message()));
  REQUIRE(sc);
  return *sc;
}

}  // namespace

// Fixture: 10 layers of 1e5 KV bytes per token (1e6 B per token); SNIC 10 GB/s (storage at line rate),
// CNIC 500 GB/s, DRAM 10 TB/s; compute ~1e-9 s. A turn with hit 5,100 and miss 2,000 tokens:
//   read  5,100 x 1e6 / 10e9                          = 0.51 s
//   Basic: load 5.1e9 / 500e9 = 0.0102 s, then the pass, then the push 7.1e9 / 500e9 = 0.0142 s
//   layerwise: 10 layers of max(load 0.51e9, push 0.71e9, both on the CNIC read 1.22e9) / 500e9 = 2.44 ms
//              = 24.4 ms, plus the first layer's load 1.02 ms and the last layer's push 1.42 ms
TEST_CASE("Unloaded TTFT: read, load, passes and push of a lone turn, by hand") {
  SECTION("Basic: in series") {
    const auto sc = io_1p1d({});
    sim::cost::UnloadedLatency u(sc);
    const auto t = u.ttft(5100, 2000);
    CHECK(t.read_s == Approx(0.51).epsilon(1e-12));
    CHECK(t.load_s == Approx(0.0102).epsilon(1e-12));
    CHECK(t.push_s == Approx(0.0142).epsilon(1e-12));
    CHECK(t.prefill_s < 1e-5);  // 10 layers of microsecond-scale compute
    CHECK(t.passes == 1);
    CHECK(t.total_s() == Approx(0.5344).epsilon(1e-5));
  }
  SECTION("layerwise: a pipeline of layers, the first pass's load and push sharing the CNIC read") {
    const auto sc = io_1p1d({"policy.layerwise=true"});
    sim::cost::UnloadedLatency u(sc);
    const auto t = u.ttft(5100, 2000);
    CHECK(t.read_s == Approx(0.51).epsilon(1e-12));
    CHECK(t.prefill_s == Approx(0.0244).epsilon(1e-6));
    CHECK(t.load_s == Approx(0.00102).epsilon(1e-12));
    CHECK(t.push_s == Approx(0.00142).epsilon(1e-12));
    CHECK(t.total_s() == Approx(0.51 + 0.0244 + 0.00102 + 0.00142).epsilon(1e-5));
  }
  SECTION("no hit: nothing read or loaded, the prompt's KV pushed") {
    const auto sc = io_1p1d({});
    sim::cost::UnloadedLatency u(sc);
    const auto t = u.ttft(0, 5000);
    CHECK(t.read_s == 0);
    CHECK(t.load_s == 0);
    CHECK(t.push_s == Approx(0.01).epsilon(1e-12));
  }
  SECTION("TPOT: the fixture's decode step is its 0.5 ms step overhead") {
    const auto sc = io_1p1d({});
    sim::cost::UnloadedLatency u(sc);
    CHECK(u.tpot_s(7100) == Approx(0.0005).epsilon(1e-4));
  }
}

// The compute quota cuts a long miss into passes: on Qwen 32B (dense attention, quadratic in the prompt;
// quota 0.3 s of attention per layer), a 120K-token prompt needs more than one pass. With fifo batching the
// engine's largest pass (16,384 tokens) cuts it into ceil(120,000 / 16,384) = 8; without that cap one pass
// does it, and no slower (the same attention, and one pass's fixed costs instead of several).
TEST_CASE("Unloaded TTFT: quota chunking splits a long prompt into passes") {
  const std::string file = std::string(DPSIM_SOURCE_DIR) + "/scenarios/paper/qwen32b-64k.json";
  auto sc = sim::config::load_scenario(file, {});
  REQUIRE(sc);
  sim::cost::UnloadedLatency quota(*sc);
  const auto q = quota.ttft(0, 120000);
  CHECK(q.passes > 1);
  auto capped_sc = sim::config::load_scenario(file, {"policy.batching=fifo"});
  REQUIRE(capped_sc);
  REQUIRE(capped_sc->engine.max_pass_tokens == 16384);
  CHECK(sim::cost::UnloadedLatency(*capped_sc).ttft(0, 120000).passes == 8);
  auto fifo_sc = sim::config::load_scenario(
      file, {"policy.batching=fifo", "engine_overrides.prefill.max_pass_tokens=0"});
  REQUIRE(fifo_sc);
  sim::cost::UnloadedLatency fifo(*fifo_sc);
  const auto f = fifo.ttft(0, 120000);
  CHECK(f.passes == 1);
  CHECK(f.prefill_s <= q.prefill_s);
}
