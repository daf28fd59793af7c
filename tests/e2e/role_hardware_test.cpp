// Hardware per role, end to end: the decode steps cost what the decode file says and the prefill passes
// what the prefill file says, each independent of the other role's file; a sweep's analytic range is the
// per-role one.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

double summary_mean(const nlohmann::json& r, const char* key) {
  return r.at("summary").at(key).at("mean").get<double>();
}

}  // namespace

TEST_CASE("Role hardware: decode file with 2x HBM bandwidth -> TPOT by the decode file, TTFT unchanged",
          "[e2e]") {
  // shards_1p4d (decode_test.cpp): one agent; a decode step reads the 5e9 B of weights of one of the decode
  // role's 4 GPUs plus its context's KV (1e6 B per token), plus the engine's 0.5 ms per step (the software is
  // one engine for both roles). e2e-shards-decode-hw has 2e12 B/s of HBM where e2e-shards-hw has 1e12 B/s.
  const std::string sc = e2e::case_file("shards_1p4d.json");
  const auto one = e2e::run_ok(sc);
  const auto dec = e2e::run_ok(sc, {"hardware_decode=e2e-shards-decode-hw.json"});
  const auto pre = e2e::run_ok(sc, {"hardware_prefill=e2e-shards-decode-hw.json"});
  const auto both = e2e::run_ok(sc, {"hardware=e2e-shards-decode-hw.json"});
  auto tpot = [](double bw, double overhead) {
    double sum = 0;
    for (double context : {5001.0, 7101.0, 8201.0, 8751.0}) sum += (5e9 + context * 1e6) / bw + overhead;
    return sum / 4;
  };
  CHECK(summary_mean(one, "tpot_s") == Approx(tpot(1e12, 5e-4)).epsilon(1e-5));
  CHECK(summary_mean(dec, "tpot_s") == Approx(tpot(2e12, 5e-4)).epsilon(1e-5));
  // The decode steps do not read the prefill file, nor the prefill passes the decode file.
  CHECK(summary_mean(pre, "tpot_s") == summary_mean(one, "tpot_s"));
  CHECK(summary_mean(both, "tpot_s") == summary_mean(dec, "tpot_s"));
  CHECK(summary_mean(dec, "ttft_s") == summary_mean(one, "ttft_s"));
  CHECK(summary_mean(both, "ttft_s") == summary_mean(pre, "ttft_s"));
  // The prefill file's HBM does show in the TTFT (a prefill pass reads the weights at its HBM rate).
  CHECK(summary_mean(pre, "ttft_s") < summary_mean(one, "ttft_s"));
  // The resolved scenario echoes the key only when it is given.
  CHECK(dec.at("scenario").at("hardware_decode") == "e2e-shards-decode-hw.json");
  CHECK_FALSE(one.at("scenario").contains("hardware_decode"));
  CHECK_FALSE(one.at("scenario").contains("hardware_prefill"));
}

TEST_CASE("Role hardware: a decode file with a slower SNIC -> the decode node's storage reads at its rate",
          "[e2e]") {
  // io_1p1d with the DE read path: every hit byte enters through the decode node's SNIC, whose capacity in
  // the results is the decode file's.
  e2e::Scratch dir;
  const std::string hw = (dir.dir / "slow-snic.json").string();
  auto base = e2e::read_json(e2e::case_file("e2e-io-hw.json"));
  base["name"] = "slow-snic";
  base["snic"]["bw_Bps"] = base["snic"]["bw_Bps"].get<double>() / 2;
  { std::ofstream(hw) << base.dump(); }
  const auto r =
      e2e::run_ok(e2e::case_file("io_1p1d.json"), {"hardware_decode=" + hw, "policy.read_path=de"});
  bool seen[2] = {false, false};
  for (const auto& l : r.at("resources").at("snic")) {
    const bool decode = l.at("role") == "decode";
    seen[decode] = true;
    const double want =
        decode ? base["snic"]["bw_Bps"].get<double>() : 2 * base["snic"]["bw_Bps"].get<double>();
    CHECK(l.at("bandwidth_Bps").get<double>() == want);
  }
  CHECK((seen[0] && seen[1]));
}

TEST_CASE(
    "Role hardware: 2-GPU decode nodes beside 1-GPU prefill nodes -> a DE per GPU, and a decode node fails",
    "[e2e]") {
  // io_1p1d (e2e-io-hw: 1 GPU per node) with decode nodes of a 2-GPU copy of it, 1P2D, sixteen agents; node 2
  // (decode) is down from 0.05 s to 0.5 s: its requests restart elsewhere and every turn completes (run_ok
  // checks the invariants: bytes, buffers and HBM released, storage bytes lost counted apart).
  e2e::Scratch dir;
  const std::string hw = (dir.dir / "two-gpu.json").string();
  auto two = e2e::read_json(e2e::case_file("e2e-io-hw.json"));
  two["name"] = "two-gpu";
  two["gpus_per_node"] = 2;
  { std::ofstream(hw) << two.dump(); }
  const std::vector<std::string> sets = {"hardware_decode=" + hw, "cluster.decode_nodes=2",
                                         "workload.trace=sixteen_agents.jsonl", "workload.agents=16"};
  const auto base = e2e::run_ok(e2e::case_file("io_1p1d.json"), sets);
  int cnics[3] = {0, 0, 0};
  for (const auto& l : base.at("resources").at("cnic")) ++cnics[l.at("node").get<int>()];
  CHECK(cnics[0] == 2);  // one GPU: read and write
  CHECK(cnics[1] == 4);  // two GPUs
  CHECK(cnics[2] == 4);
  auto failing = sets;
  failing.push_back(
      R"(events=[{"kind":"node_down","at_s":0.05,"nodes":[2]},{"kind":"node_up","at_s":0.5,"nodes":[2]}])");
  const auto r = e2e::run_ok(e2e::case_file("io_1p1d.json"), failing);
  CHECK(r.at("summary").at("turns_completed") == base.at("summary").at("turns_completed"));
  CHECK(r.at("summary").at("failures").at("requests_restarted").get<int>() > 0);
}
