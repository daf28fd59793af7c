// End-to-end check of where a chunked prefill loads its cached KV from, against a hand computation.
#include <catch2/catch.hpp>
#include <string>

#include "tests/e2e/support.h"

TEST_CASE(
    "Prefill: a turn chunked over two passes -> the first chunk's KV is loaded from the DE buffer it went to",
    "[e2e]") {
  // chunked_1p1d: one 5000-token turn (no hit, 10 generated) on e2e-io-hw (1 MB of KV per token), PE
  // read path, a compute quota that cuts the prefill in two passes. The pass sizes come from the timeline
  // (written by the engine's pass loop, not by the byte accounting): pass 2 starts with C cached tokens,
  // the KV that pass 1 computed and pushed to the DE buffer.
  e2e::Scratch dir;
  const std::string path = (dir.dir / "tl.json").string();
  const auto r = e2e::run_ok(e2e::case_file("chunked_1p1d.json"), {"outputs.timeline=" + path});
  const auto tl = nlohmann::json::parse(e2e::read_text(path));
  int passes = 0;
  double cached = 0;
  for (const auto& e : tl.at("traceEvents"))
    if (e.value("name", "") == "prefill" && e.at("args").contains("cached_tokens")) {
      passes++;
      cached += e.at("args").at("cached_tokens").get<double>();
    }
  REQUIRE(passes == 2);
  REQUIRE(cached > 0);
  const double kv = 1e6, miss = 5000, gen = 10;
  // The PE node's DRAM carries nothing: no hit is read into its buffer, and no KV computed on its GPU
  // goes there (the code before loaded pass 2's cached KV from it: C MB).
  CHECK(e2e::node_link_bytes(r, "dram", 0, "shared") == 0);
  // The DE node's DRAM: the pushes (miss), pass 2's load of the C cached tokens, the H2D (miss), the
  // persist of the appended KV (miss), the D2H and persist of the generated KV (gen each).
  CHECK(e2e::node_link_bytes(r, "dram", 1, "shared") ==
        Approx((3 * miss + cached + 2 * gen) * kv).epsilon(1e-9));
}
