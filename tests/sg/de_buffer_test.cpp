// The DE buffer in DRAM or in HBM (cluster.de_buffer; sim/engine/de_buffer.h), on the two-turn 1P1D fixture
// of turn_phases_test.cpp (tests/data/turn_phases/: its header derives every phase's time by hand), run
// through sim::run::simulate with the read path and the DE buffer overridden. Each test case checks the
// bytes every link carried, the DE HBM byte-seconds before and after the decode join, and the handoff to
// the decode (TTST, the TTFT breakdown's alloc), against the hand computation below.
//
// ---- Hand computation (units: tokens, bytes, seconds) ----
// Fixture: 1 GPU per node, n0 = prefill, n1 = decode; SNIC 10 GB/s, CNIC 25 GB/s per direction, DRAM
// 10 TB/s (never binds); KV 1e6 B per token; Basic (no layerwise), FIFO, round_robin, persist_interval 0.
// Turn 0: hit 0, miss 990, gen 10; turn 1: hit 1000, miss 1000, gen 11. DE HBM need = (hit + miss + gen)
// x 1e6: 1e9 and 2.011e9 B. Times from turn_phases_test.cpp's header: prefill 0.406401854464 (turn 0) and
// 0.4112292096 (turn 1); decode 9 steps x 0.042982 = 0.386838 and 10 x 0.045002 = 0.45002.
// Routes (sim/README.md): storage -> DRAM (SNIC in, DRAM); H2D and D2H (DRAM, CNIC read, CNIC write);
// GPU -> other node's DRAM or GPU (own CNIC read, other CNIC write, [DRAM]); storage -> DE GPU through its
// DRAM (SNIC in, DRAM, CNIC write); persist DRAM -> storage (DRAM, SNIC out).
// Persisted on both variants: the appended KV (990 + 1000 tokens) and the generated KV (10 + 11 tokens):
// 2.011e9 B out of n1's SNIC. From HBM (generated always, appended with hbm) each byte goes D2H first:
// n1 CNIC read + CNIC write + DRAM, then DRAM + SNIC out.
//
// DE read path, DE buffer in HBM (turn 1's hit: storage -> n1 GPU; layer loads n1 GPU -> n0 GPU; the PE
// pushes only the miss, n0 GPU -> n1 GPU; no H2D; appended KV D2H then to storage):
//   n1.snic/in        1e9 (the read)
//   n1.dram           1e9 (the read, once) + 2 x 2.011e9 (D2H + persist of everything persisted) = 5.022e9
//   n1.g0.cnic/write  1e9 (the read) + 9.9e8 + 1e9 (pushes) + 2.011e9 (D2H)                  = 5.001e9
//   n1.g0.cnic/read   1e9 (layer loads to the PE) + 2.011e9 (D2H)                            = 3.011e9
//   n0.g0.cnic/read   9.9e8 + 1e9 (pushes);  n0.g0.cnic/write 1e9 (layer loads);  n0.dram 0
//   Times: turn 0 takes HBM when its PE takes it into a batch, t = 0, and joins after prefill + push
//   (0.406401854464 + 0.0396 = 0.446001854464), no copy-in; it ends at 0.832839854464. Turn 1 takes HBM
//   when its read starts (its issue, 0.832839854464), then read 1e9 / 10 GB/s = 0.1, load 1e9 / 25 GB/s =
//   0.04, prefill 0.4112292096, push 0.04: joins 0.5912292096 later; JCT = 0.832839854464 + 0.5912292096 +
//   0.45002 = 1.874089064064.
//     before the join: 1e9 x 0.446001854464 + 2.011e9 x 0.5912292096
//     decoding:        1e9 x 0.386838 + 2.011e9 x 0.45002
//   TTST = one step (0.042982, 0.045002); alloc after the first token = 0.
//
// DE read path, DE buffer in DRAM (today's): the read lands in n1's DRAM, the layer loads leave from it,
// the pushes land in it, and at the decode start the prompt KV is copied H2D (990 and 2000 tokens):
//   n1.snic/in        1e9
//   n1.dram           1e9 (read) + 1e9 (layer loads) + 9.9e8 + 1e9 (pushes) + 9.9e8 + 2e9 (H2D)
//                     + 1.99e9 (appended KV to storage) + 2 x 2.1e7 (generated: D2H + persist) = 9.012e9
//   n1.g0.cnic/read   1e9 (layer loads) + 9.9e8 + 2e9 (H2D) + 2.1e7 (D2H)                    = 4.011e9
//   n1.g0.cnic/write  9.9e8 + 1e9 (pushes) + 9.9e8 + 2e9 (H2D) + 2.1e7 (D2H)                 = 5.001e9
//   n0 as above. HBM from the loader, after the prefill, for the H2D only (9.9e8 and 2e9 B at 25 GB/s):
//     before the join: 1e9 x 0.0396 + 2.011e9 x 0.08;  decoding as above
//   TTST = H2D + one step; JCT = 1.874089064064 + 0.0396 + 0.08.
//
// PE read path, DE buffer in HBM (turn 1's hit: storage -> n0 DRAM, H2D on n0, pushes of hit + miss
// n0 GPU -> n1 GPU; turn 1 takes HBM when its PE takes it into a batch, after its read):
//   n0.snic/in 1e9;  n0.dram 2e9 (read + H2D);  n0.g0.cnic/read 1e9 (H2D) + 9.9e8 + 2e9 (pushes) = 3.99e9
//   n0.g0.cnic/write 1e9 (H2D);  n1.snic/in 0;  n1.dram 2 x 2.011e9 = 4.022e9
//   n1.g0.cnic/write 9.9e8 + 2e9 (pushes) + 2.011e9 (D2H) = 5.001e9;  n1.g0.cnic/read 2.011e9 (D2H)
//     before the join: 1e9 x 0.446001854464 + 2.011e9 x (0.04 + 0.4112292096 + 0.08)
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/run/simulate.h"

namespace {

constexpr double kT0Join = 0.406401854464 + 0.0396;  // turn 0: prefill + push (no copy-in)
constexpr double kT0Decode = 0.386838, kT1Decode = 0.45002;
constexpr double kStep0 = 0.042982, kStep1 = 0.045002;
constexpr double kNeed0 = 1e9, kNeed1 = 2.011e9;  // DE HBM per turn, B
constexpr double kPersisted = 2.011e9;            // appended + generated KV, B

// The fixture's scenario with `sets`, run to its end; the results JSON.
nlohmann::json run_fixture(const std::vector<std::string>& sets) {
  auto sc = sim::config::load_scenario(
      std::string(DPSIM_SOURCE_DIR) + "/tests/data/turn_phases/scenario.json", sets);
  INFO((sc ? std::string() : sc.status().message()));
  REQUIRE(sc);
  auto res = sim::run::simulate(*sc);
  INFO((res ? std::string() : res.status().message()));
  REQUIRE(res);
  REQUIRE(res->json["complete"].get<bool>());
  REQUIRE(res->json["summary"]["turns_completed"].get<int64_t>() == 2);
  return res->json;
}

// Bytes of every accounted link direction: "n1.dram", "n1.snic/in", "n1.g0.cnic/write", ...
std::map<std::string, double> links(const nlohmann::json& r) {
  std::map<std::string, double> out;
  for (const auto& [kind, entries] : r.at("resources").items()) {
    if (kind == "gpu" || kind == "buffer") continue;  // busy time and bytes held, not links
    for (const auto& e : entries) {
      std::string key = "n" + std::to_string(e.at("node").get<int>());
      if (e.contains("gpu") && !e.at("gpu").is_null() && e.at("gpu").get<int>() >= 0)
        key += ".g" + std::to_string(e.at("gpu").get<int>());
      key += "." + kind;
      const std::string dir = e.at("direction");
      if (dir != "shared") key += "/" + dir;
      out[key] += e.at("bytes").get<double>();
    }
  }
  return out;
}

// Every link's bytes equal `expected` (a link not listed carried none), to a byte per transfer.
void check_links(const nlohmann::json& r, const std::map<std::string, double>& expected) {
  const auto got = links(r);
  for (const auto& [name, bytes] : got) {
    INFO("link " << name);
    const auto it = expected.find(name);
    CHECK(bytes == Approx(it == expected.end() ? 0.0 : it->second).margin(64));
  }
  for (const auto& [name, bytes] : expected) {
    INFO("expected link " << name);
    CHECK(got.count(name) == 1);
  }
}

double summary(const nlohmann::json& r, const std::string& a, const std::string& b = "") {
  const auto& s = r.at("summary").at(a);
  return b.empty() ? s.get<double>() : s.at(b).get<double>();
}

Approx seconds(double s) {
  return Approx(s).epsilon(0).margin(1e-6);
}

Approx byte_seconds(double bs) {
  return Approx(bs).epsilon(0).margin(1e4);  // 1e-6 s on 1e9-2e9 B, with room
}

}  // namespace

TEST_CASE(
    "DE buffer hbm: 1P1D, DE read path -> storage into the DE GPU through DRAM once, no H2D, HBM "
    "held from the read's start",
    "[sg]") {
  const auto r = run_fixture({"policy.read_path=de", "cluster.de_buffer=hbm"});
  check_links(r, {{"n1.snic/in", 1e9},
                  {"n1.snic/out", kPersisted},
                  {"n1.dram", 1e9 + 2 * kPersisted},
                  {"n1.g0.cnic/write", 1e9 + 9.9e8 + 1e9 + kPersisted},
                  {"n1.g0.cnic/read", 1e9 + kPersisted},
                  {"n0.g0.cnic/read", 9.9e8 + 1e9},
                  {"n0.g0.cnic/write", 1e9}});
  const double t1_join = 0.1 + 0.04 + 0.4112292096 + 0.04;
  CHECK(summary(r, "jct_s") == seconds(kT0Join + kT0Decode + t1_join + kT1Decode));  // 1.874089064064
  CHECK(summary(r, "de_hbm", "before_join_byte_s") == byte_seconds(kNeed0 * kT0Join + kNeed1 * t1_join));
  CHECK(summary(r, "de_hbm", "decoding_byte_s") == byte_seconds(kNeed0 * kT0Decode + kNeed1 * kT1Decode));
  CHECK(summary(r, "de_hbm", "before_join_peak_bytes") == Approx(kNeed1));
  CHECK(summary(r, "de_hbm", "before_join_peak_bytes_one_de") == Approx(kNeed1));
  // The handoff to the decode: the KV is in HBM already.
  CHECK(summary(r, "ttst_s", "mean") == seconds((kStep0 + kStep1) / 2));
  CHECK(r.at("summary").at("ttft_breakdown_s").at("alloc_after_first_token").get<double>() == seconds(0));
  CHECK(r.at("invariants").at("de_hbm_held_at_end_bytes").get<double>() == 0);
  CHECK(r.at("invariants").at("link_bytes_conservation_error").get<double>() <= 1e-9);
  CHECK(r.at("scenario").at("cluster").at("de_buffer") == "hbm");
}

TEST_CASE(
    "DE buffer dram: 1P1D, DE read path -> the read, the loads, the pushes and the H2D all cross the DE "
    "DRAM, HBM from the copy-in",
    "[sg]") {
  const auto r = run_fixture({"policy.read_path=de", "cluster.de_buffer=dram"});
  check_links(r, {{"n1.snic/in", 1e9},
                  {"n1.snic/out", kPersisted},
                  {"n1.dram", 1e9 + 1e9 + 9.9e8 + 1e9 + 9.9e8 + 2e9 + 1.99e9 + 2 * 2.1e7},
                  {"n1.g0.cnic/read", 1e9 + 9.9e8 + 2e9 + 2.1e7},
                  {"n1.g0.cnic/write", 9.9e8 + 1e9 + 9.9e8 + 2e9 + 2.1e7},
                  {"n0.g0.cnic/read", 9.9e8 + 1e9},
                  {"n0.g0.cnic/write", 1e9}});
  const double t1_join = 0.1 + 0.04 + 0.4112292096 + 0.04;
  CHECK(summary(r, "jct_s") == seconds(kT0Join + 0.0396 + kT0Decode + t1_join + 0.08 + kT1Decode));
  CHECK(summary(r, "de_hbm", "before_join_byte_s") == byte_seconds(kNeed0 * 0.0396 + kNeed1 * 0.08));
  CHECK(summary(r, "de_hbm", "decoding_byte_s") == byte_seconds(kNeed0 * kT0Decode + kNeed1 * kT1Decode));
  CHECK(summary(r, "ttst_s", "mean") == seconds((0.0396 + kStep0 + 0.08 + kStep1) / 2));
  CHECK(r.at("summary").at("ttft_breakdown_s").at("alloc_after_first_token").get<double>() ==
        seconds((0.0396 + 0.08) / 2));
}

TEST_CASE(
    "DE buffer hbm: 1P1D, PE read path -> the PE pushes hit and miss into the DE GPU, the DE DRAM "
    "carries only persistence",
    "[sg]") {
  const auto r = run_fixture({"policy.read_path=pe", "cluster.de_buffer=hbm"});
  check_links(r, {{"n0.snic/in", 1e9},
                  {"n0.dram", 2e9},
                  {"n0.g0.cnic/read", 1e9 + 9.9e8 + 2e9},
                  {"n0.g0.cnic/write", 1e9},
                  {"n1.snic/out", kPersisted},
                  {"n1.dram", 2 * kPersisted},
                  {"n1.g0.cnic/write", 9.9e8 + 2e9 + kPersisted},
                  {"n1.g0.cnic/read", kPersisted}});
  const double t1_join = 0.04 + 0.4112292096 + 0.08;  // from its batch: load, prefill, push of hit + miss
  CHECK(summary(r, "jct_s") == seconds(kT0Join + kT0Decode + 0.1 + t1_join + kT1Decode));
  CHECK(summary(r, "de_hbm", "before_join_byte_s") == byte_seconds(kNeed0 * kT0Join + kNeed1 * t1_join));
  CHECK(summary(r, "ttst_s", "mean") == seconds((kStep0 + kStep1) / 2));
}
