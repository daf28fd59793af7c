// End-to-end checks of `dpsim run` against hand computations on a storage-bound 1P1D platform
// (tests/e2e/cases/io_1p1d.json: e2e-io-hw.json + e2e-io-engine.json + e2e-io-model.json), and the invariants
// of every run.
//
// The platform (one GPU per node) is chosen so a turn's time is a sum of transfer times:
//   SNIC S = 10 GB/s per direction, the slowest link; CNIC C = 500 GB/s; DRAM 10 TB/s (never binds);
//   the engine's storage efficiency 1 (reads at the SNIC line rate); GPU 1e18 FLOP/s and HBM at 1e18 B/s, so
//   prefill compute (< 1e-6 s per turn here) and the FLOP/HBM terms of a decode step (< 1e-7 s) vanish, and a
//   decode step costs the engine's decode.cpu_s (tau = 0.5 ms);
//   the model moves kv = layers x bytes_per_token_layer = 10 x 100,000 B = 1 MB per token.
// Every number below is read from those files and the trace, not retyped.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

const std::string kCoreScenario = e2e::case_file("io_1p1d.json");

struct IoPlatform {
  double kv = 0;   // KV bytes per token (all layers)
  double S = 0;    // SNIC bytes/s per direction
  double C = 0;    // CNIC bytes/s per direction
  double tau = 0;  // one decode step, s
};

IoPlatform io_platform() {
  const auto sc = e2e::read_json(kCoreScenario);
  const auto model = e2e::read_json(e2e::case_file(sc.at("model")));
  const auto hw = e2e::read_json(e2e::case_file(sc.at("hardware")));
  const auto engine = e2e::read_json(e2e::case_file(sc.at("engine")));
  IoPlatform p;
  const auto& kv = model.at("kv");
  double per_layer = kv.at("bytes_per_token_layer").get<double>();
  if (kv.value("indexer_keys_in_cache", true)) per_layer += kv.value("indexer_bytes_per_token_layer", 0.0);
  p.kv = per_layer * model.at("layers").get<double>();
  p.S = hw.at("snic").at("bw_Bps").get<double>() * engine.at("storage").value("efficiency", 1.0);
  p.C = hw.at("cnic").at("bw_Bps").get<double>();
  p.tau = engine.at("decode").at("cpu_s").get<double>();
  REQUIRE(p.S < p.C / 10);  // the fixture's premise: the SNIC is by far the slowest link
  return p;
}

struct TurnTokens {
  double hit = 0, miss = 0, gen = 0;
};

// Turns of one trajectory: hit = all earlier context (append + gen of earlier turns), miss = append.
std::vector<TurnTokens> turns_of(const nlohmann::json& trajectory) {
  std::vector<TurnTokens> turns;
  double context = 0;
  for (const auto& t : trajectory.at("turns")) {
    TurnTokens x{context, t.at("append").get<double>(), t.at("gen").get<double>()};
    context += x.miss + x.gen;
    turns.push_back(x);
  }
  return turns;
}

// JCT of one agent alone on 1P1D, Basic prefill (layerwise off: the whole KV is loaded before compute,
// then pushed after it). Its turns run one after another, and within a turn each step waits for the
// previous one, so the JCT is the sum over turns of (all in bytes / bytes per second):
//   read     hit·kv / S            storage -> the read side's DRAM, through that node's SNIC (in)
//   load     hit·kv / C            PE path: PE DRAM -> PE GPU (H2D over the PE CNIC);
//                                  DE path: DE DRAM -> PE GPU (RDMA, DE CNIC read + PE CNIC write)
//   push     (hit + miss)·kv / C   PE path: the whole prompt KV, PE GPU -> DE DRAM;
//            miss·kv / C           DE path: only the computed tokens' KV (the hit is already there)
//   h2d      (hit + miss)·kv / C   DE DRAM -> DE GPU before joining the decode batch
//   decode   (gen - 1)·tau         the first token comes from the prefill
// Persistence (DE DRAM -> DE SNIC out) overlaps the next turn and uses the other SNIC direction.
double hand_jct(const std::vector<TurnTokens>& turns, const IoPlatform& p, bool de_path) {
  double jct = 0;
  for (const auto& t : turns) {
    const double read = t.hit * p.kv / p.S;
    const double load = t.hit * p.kv / p.C;
    const double push = (de_path ? t.miss : t.hit + t.miss) * p.kv / p.C;
    const double h2d = (t.hit + t.miss) * p.kv / p.C;
    jct += read + load + push + h2d + (t.gen - 1) * p.tau;
  }
  return jct;
}

void check_one_agent_jct(const std::string& read_path) {
  const IoPlatform p = io_platform();
  const auto trace = e2e::read_jsonl(e2e::case_file("one_agent.jsonl"));
  REQUIRE(trace.size() == 1);
  const auto turns = turns_of(trace[0]);
  const bool de_path = read_path == "de";
  const double expected = hand_jct(turns, p, de_path);
  // one_agent.jsonl: hits 0, 5100, 7200, 8250 tokens (20,550 in all); misses 5000, 2000, 1000, 500;
  // gens 100, 100, 50, 20. PE path: reads 20.55 GB / 10 GB/s = 2.055 s; loads 20.55 GB, pushes and H2D
  // 29.05 GB each over 500 GB/s = 0.0411 + 0.0581 + 0.0581 s; decode 266 steps x 0.5 ms = 0.133 s;
  // JCT = 2.3453 s. DE path: pushes carry only the 8.5 GB of misses (0.017 s): JCT = 2.3042 s.
  // The storage term is 88% of the JCT, so a read at the wrong rate or on the wrong link fails by far.
  const double storage_s = 20550 * p.kv / p.S;
  REQUIRE(storage_s > 0.8 * expected);

  const auto r = e2e::run_ok(kCoreScenario, {"policy.read_path=" + read_path, "policy.layerwise=false"});
  const double jct = r.at("summary").at("jct_s").get<double>();
  INFO("read path " << read_path << ": dpsim JCT " << jct << " s, hand-computed " << expected << " s");
  CHECK(jct == Approx(expected).epsilon(0.05));
  // All the reads went through the read side's SNIC, and that SNIC was busy for the whole read time.
  const std::string side = de_path ? "decode" : "prefill";
  CHECK(e2e::link_bytes(r, "snic", side, "in") == Approx(20550 * p.kv).epsilon(1e-9));
}

}  // namespace

TEST_CASE("JCT: one agent on an I/O-bound 1P1D, Basic PE read path -> the hand-computed JCT within 5%",
          "[e2e]") {
  check_one_agent_jct("pe");
}

TEST_CASE("JCT: one agent on an I/O-bound 1P1D, DE read path -> the hand-computed JCT within 5%", "[e2e]") {
  check_one_agent_jct("de");
}

TEST_CASE("JCT: 16 agents saturating one SNIC -> JCT = total hit bytes / SNIC bandwidth within 5%", "[e2e]") {
  const IoPlatform p = io_platform();
  const auto trace = e2e::read_jsonl(e2e::case_file("sixteen_agents.jsonl"));
  REQUIRE(trace.size() == 16);
  double hit_tokens = 0;
  for (const auto& traj : trace)
    for (const auto& t : turns_of(traj)) hit_tokens += t.hit;
  // Each agent: turn 0 {append 1000, gen 20}, then 7 turns {200, 20}: hits 1020, 1240, ..., 2340 =
  // 7 x 1020 + 220 x (0 + 1 + ... + 6) = 11,760 tokens; 16 agents: 188,160 tokens = 188.16 GB.
  // Every read goes through the one PE SNIC (Basic), so JCT >= 188.16 GB / 10 GB/s = 18.816 s. With 16
  // agents at least 15 reads are queued whenever one agent is between reads, so the SNIC never idles
  // after turn 0; what is left is turn 0 (no reads: ~0.07 s of CNIC pushes and decode) and the last
  // turn's post-read tail (~0.02 s): about 0.5% of the JCT.
  REQUIRE(hit_tokens == 16 * 11760);
  const double bound = hit_tokens * p.kv / p.S;
  for (const std::string path : {"pe", "de"}) {
    const auto r = e2e::run_ok(kCoreScenario, {"workload.trace=sixteen_agents.jsonl", "workload.agents=16",
                                               "policy.read_path=" + path, "policy.layerwise=false"});
    const double jct = r.at("summary").at("jct_s").get<double>();
    INFO("read path " << path << ": dpsim JCT " << jct << " s, hit bytes / SNIC bandwidth " << bound << " s");
    CHECK(jct >= bound * (1 - 1e-9));  // no SNIC can beat its line rate
    CHECK(jct == Approx(bound).epsilon(0.05));
    const std::string side = path == "de" ? "decode" : "prefill";
    CHECK(r.at("bottleneck").at("resource") == side + ".snic.in");
  }
}

TEST_CASE("Oracle: reads, H2D/D2H and P->D transfers are free -> no byte on any CNIC or SNIC", "[e2e]") {
  for (const auto& sets : std::vector<std::vector<std::string>>{
           {"policy.read_path=oracle", "workload.trace=sixteen_agents.jsonl", "workload.agents=16"},
           {"policy.read_path=oracle", "workload.trace=", "workload.agents=8", "workload.max_turns=10"}}) {
    const auto r = e2e::run_ok(kCoreScenario, sets);
    INFO("workload " << r.at("scenario").at("workload").dump());
    CHECK(e2e::link_bytes(r, "snic", "", "") == 0);
    CHECK(e2e::link_bytes(r, "cnic", "", "") == 0);
    CHECK(e2e::link_bytes(r, "dram", "", "") == 0);
    CHECK(r.at("invariants").at("storage_bytes_read").get<double>() == 0);
    CHECK(r.at("invariants").at("hit_bytes_expected").get<double>() > 0);  // there was KV to move
    CHECK(r.at("summary").at("jct_s").get<double>() > 0);
  }
}
