// End-to-end checks of the run's end and of the decode step's cost against hand computations.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

double num(const nlohmann::json& r, const char* key) {
  return r.at("summary").at(key).get<double>();
}

}  // namespace

TEST_CASE("Run end: every turn done -> stopped_at_s is the time the last turn ended", "[e2e]") {
  // Offline: the stop time is the JCT (the last turn's end), not 0.
  const auto off = e2e::run_ok(e2e::case_file("io_1p1d.json"));
  CHECK(off.at("summary").at("stopped_by") == "all_turns_done");
  CHECK(num(off, "jct_s") > 1);
  CHECK(num(off, "stopped_at_s") == Approx(num(off, "jct_s")).epsilon(1e-12));
  // Online at a light load, no stop rule firing: the same.
  const auto on = e2e::run_ok(e2e::case_file("online_1p1d.json"), {"workload.aps=0.5"});
  CHECK(on.at("summary").at("stopped_by") == "all_turns_done");
  CHECK(num(on, "stopped_at_s") == Approx(num(on, "jct_s")).epsilon(1e-12));
}

TEST_CASE("Decode step: an EP model on 1P4D -> each step reads the weights of the decode role's 4 shards",
          "[e2e]") {
  // e2e-shards-model: 2e10 parameters at 1 B, weight_shards 2 (the model's default EP size); the decode
  // role has 4 GPUs, so each DE GPU holds 2e10 / 4 = 5e9 B of weights (the size its HBM is planned with).
  // A step of a batch of one reads those weights plus the KV of the request's context at the plan's start:
  // (hit + miss + 1) tokens x 10 layers x 1e5 B. HBM 1e12 B/s at efficiency 1; compute is 1e18 FLOP/s
  // (negligible); overhead 0.5 ms. The agent (one_agent.jsonl) appends 5000, 2000, 1000, 500 tokens and
  // generates 100, 100, 50, 20, so its turns' hit + miss + 1 are 5001, 7101, 8201, 8751 tokens, and a
  // turn's TPOT (one plan, no other request) is its step time.
  const auto r = e2e::run_ok(e2e::case_file("shards_1p4d.json"));
  const double weights = 2e10 / 4, kv_token = 10 * 1e5, bw = 1e12, overhead = 5e-4;
  double tpot_sum = 0;
  for (double context : {5001.0, 7101.0, 8201.0, 8751.0})
    tpot_sum += (weights + context * kv_token) / bw + overhead;
  CHECK(r.at("summary").at("tpot_s").at("mean").get<double>() == Approx(tpot_sum / 4).epsilon(1e-5));
  // With the model's default sharding (2 GPUs: 1e10 B) every step would take 5 ms more.
  CHECK(r.at("summary").at("tpot_s").at("mean").get<double>() < tpot_sum / 4 + 1e-3);
}
