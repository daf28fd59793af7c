// End-to-end checks of node_down / node_up events (control/node_failures.h). The I/O-bound case of
// role_change_test.cpp (io_1p1d.json: 1 GPU per node, a 10 GB/s SNIC, 1 MB of KV per token, Basic,
// round_robin) with one agent replaying one_agent.jsonl (hits 0, 5,100, 7,200, 8,250 tokens; turn 0 appends
// 5,000 tokens) gives times and bytes by hand; DS 27B on 2 prefill nodes (one lock-step EP group) gives a
// pass that a failure undoes. Every run also passes e2e::check_invariants, whose SNIC check counts the lost
// requests' reads apart: SNIC-in bytes = storage_bytes_read + storage_bytes_lost.
#include <catch2/catch.hpp>
#include <map>
#include <utility>

#include "tests/e2e/support.h"

namespace {

const std::string kNodeFailureIo = e2e::case_file("io_1p1d.json");
const std::string kEp = e2e::case_file("ep_2p1d.json");

std::string node_event(const std::string& kind, double at, const std::string& nodes) {
  return "{\"kind\":\"" + kind + "\",\"at_s\":" + std::to_string(at) + ",\"nodes\":" + nodes + "}";
}

using e2e::snic;

// The per-turn records, keyed by (agent, turn); REQUIREs that no turn is recorded twice.
std::map<std::pair<int, int>, std::vector<std::string>> turns_once(const std::string& csv) {
  const auto rows = e2e::read_csv(csv);
  REQUIRE(rows.size() >= 2);
  REQUIRE(rows[0][2] == "issue_s");
  REQUIRE(rows[0][19] == "de_node");
  std::map<std::pair<int, int>, std::vector<std::string>> out;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto key = std::make_pair(std::stoi(rows[i][0]), std::stoi(rows[i][1]));
    INFO("agent " << key.first << " turn " << key.second);
    REQUIRE(out.count(key) == 0);
    out[key] = rows[i];
  }
  return out;
}

// DS 27B on 2P2D (kEp plus `extra` sets), sixteen agents whose first turns are all in the first pass: the
// run without a failure, and the run with node 1 down at 0.007 s, during that pass. Checks what both cases
// share: every turn recorded once, one pass failed, the 8 first turns on node 1 restarted.
struct FirstPassFailure {
  std::map<std::pair<int, int>, std::vector<std::string>> base, rec;
  nlohmann::json result;  // of the run with the failure
};
FirstPassFailure first_pass_failure(const std::vector<std::string>& extra) {
  e2e::Scratch tmp;
  const std::string base_csv = (tmp.dir / "base.csv").string(), csv = (tmp.dir / "r.csv").string();
  std::vector<std::string> sets = {"cluster.decode_nodes=2", "workload.trace=sixteen_agents.jsonl",
                                   "workload.agents=16", "policy.layerwise=true"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  FirstPassFailure out;
  auto with = sets;
  with.push_back("outputs.requests=" + base_csv);
  e2e::run_ok(kEp, with);
  out.base = turns_once(base_csv);
  for (int a = 0; a < 16; ++a) {
    REQUIRE(std::stod(out.base.at({a, 0})[6]) < 0.007);  // in the first pass
    REQUIRE(std::stod(out.base.at({a, 0})[7]) > 0.007);  // which ends after the failure
  }
  with = sets;
  with.push_back("events=[" + node_event("node_down", 0.007, "[1]") + "]");
  with.push_back("outputs.requests=" + csv);
  out.result = e2e::run_ok(kEp, with);
  out.rec = turns_once(csv);
  CHECK(out.rec.size() == 128);
  const auto& f = out.result.at("summary").at("failures");
  CHECK(f.at("prefill_passes_failed") == 1);
  CHECK(f.at("requests_restarted") == 8);
  return out;
}

}  // namespace

TEST_CASE("Node failure: a prefill node fails while it reads, and the turn reads again on the other",
          "[e2e]") {
  e2e::Scratch tmp;
  const std::string base_csv = (tmp.dir / "base.csv").string(), csv = (tmp.dir / "r.csv").string();
  // 2P1D: turn 1 goes to PE 1 (node 1) and reads its 5,100 hit tokens there from its issue. Node 1 fails at
  // 0.2 s and is up again at 1.0 s.
  e2e::run_ok(kNodeFailureIo, {"cluster.prefill_nodes=2", "outputs.requests=" + base_csv});
  const auto base = turns_once(base_csv);
  REQUIRE(base.at({0, 1})[17] == "1");
  const double issue1 = std::stod(base.at({0, 1})[2]);
  REQUIRE(issue1 < 0.2);
  const auto j = e2e::run_ok(kNodeFailureIo, {"cluster.prefill_nodes=2",
                                              "events=[" + node_event("node_down", 0.2, "[1]") + "," +
                                                  node_event("node_up", 1.0, "[1]") + "]",
                                              "outputs.requests=" + csv});
  const auto rec = turns_once(csv);
  REQUIRE(rec.size() == 4);
  // The lost read had run from the issue to 0.2 s at the SNIC's 10 GB/s.
  const double lost = (0.2 - issue1) * 10e9;
  const auto& ev = j.at("events")[0];
  CHECK(ev.at("requests_restarted") == 1);
  CHECK(ev.at("lost_in").at("reading") == 1);
  CHECK(ev.at("storage_bytes_read_before").get<double>() == 0);  // its read had not ended
  CHECK(ev.at("storage_bytes_reread").get<double>() == Approx(5.1e9));
  CHECK(j.at("invariants").at("storage_bytes_lost").get<double>() == Approx(lost).epsilon(1e-9));
  CHECK(snic(j, 1, "in") == Approx(lost).epsilon(1e-9));
  CHECK(snic(j, 0, "in") == Approx(5.1e9 + 7.2e9 + 8.25e9));
  // Turn 1 keeps its issue time; it reads again on node 0 from the failure, 0.51 s at 10 GB/s.
  const auto& t1 = rec.at({0, 1});
  CHECK(std::stod(t1[2]) == Approx(issue1).epsilon(1e-12));
  CHECK(t1[17] == "0");
  CHECK(std::stod(t1[3]) == Approx(0.2));
  CHECK(std::stod(t1[4]) == Approx(0.71));
  // The live range: 2P1D, 1P1D while node 1 is down, 2P1D again.
  const auto& up = j.at("pd_range").at("updates");
  REQUIRE(up.size() == 3);
  CHECK(up[1].at("why") == "node_down");
  CHECK(up[1].at("P").get<double>() == 1);
  CHECK(up[2].at("why") == "node_up");
  CHECK(up[2].at("t_s").get<double>() == Approx(1.0));
  CHECK(up[2].at("P").get<double>() == 2);
  CHECK(j.at("summary").at("failures").at("requests_restarted") == 1);
  const auto& sw = j.at("summary").at("roles").at("switches");
  REQUIRE(sw.size() == 2);
  CHECK(sw[0].at("t_s").get<double>() == Approx(0.2));
  CHECK(sw[0].at("prefill_nodes") == 1);
  CHECK(sw[1].at("prefill_nodes") == 2);
}

TEST_CASE("Node failure: a decode node fails mid-decode, and the turn starts over and the rest shifts by it",
          "[e2e]") {
  e2e::Scratch tmp;
  const std::string csv = (tmp.dir / "r.csv").string();
  // 1P2D: turn 0 (no hit, 5,000 appended tokens) decodes on node 1 from its first token (0.01 s). Node 1
  // fails at 0.03 s: the turn is issued again at once and runs as before on node 2, so every later time
  // moves by 0.03 s, and the 5 GB of its appended KV on its way to storage are lost.
  const std::string base_csv = (tmp.dir / "base.csv").string();
  const auto base = e2e::run_ok(kNodeFailureIo, {"cluster.decode_nodes=2", "outputs.requests=" + base_csv});
  const double first0 = std::stod(turns_once(base_csv).at({0, 0})[7]);
  const auto j = e2e::run_ok(
      kNodeFailureIo, {"cluster.decode_nodes=2", "events=[" + node_event("node_down", 0.03, "[1]") + "]",
                       "outputs.requests=" + csv});
  CHECK(j.at("summary").at("jct_s").get<double>() ==
        Approx(base.at("summary").at("jct_s").get<double>() + 0.03).epsilon(1e-9));
  const auto rec = turns_once(csv);
  REQUIRE(rec.size() == 4);
  for (const auto& [key, row] : rec) CHECK(row[19] == "2");
  CHECK(std::stod(rec.at({0, 0})[2]) == 0);                           // its first issue
  CHECK(std::stod(rec.at({0, 0})[6]) == Approx(0.03));                // its prefill again
  CHECK(std::stod(rec.at({0, 0})[10]) == Approx(0.04).margin(1e-5));  // TTFT from the first issue
  const auto& ev = j.at("events")[0];
  CHECK(ev.at("lost_in").at("decode") == 1);
  CHECK(ev.at("persist_bytes_lost").get<double>() == Approx(5e9));
  CHECK(ev.at("storage_bytes_reread").get<double>() == 0);  // no hit to read
  // The persist of the appended KV ran from the first token to the failure.
  CHECK(snic(j, 1, "out") == Approx((0.03 - first0) * 10e9).epsilon(1e-9));
}

TEST_CASE("Node failure: a lock-step prefill pass across two nodes fails on both and runs again", "[e2e]") {
  // DS 27B on 2P2D: the prefill EP group spans both prefill nodes, one pass for all 16 PEs. Sixteen agents'
  // first turns are in the first pass when node 1 fails at 0.007 s: the 8 on node 1 are lost, the 8 on
  // node 0 go back to their queues and are prefilled again.
  const FirstPassFailure r = first_pass_failure({});
  double base_first = 0;
  for (int a = 0; a < 16; ++a) base_first = std::max(base_first, std::stod(r.base.at({a, 0})[7]));
  CHECK(r.result.at("events")[0].at("lost_in").at("prefill") == 8);
  // Every first turn is prefilled on node 0 after the failed pass: none has its first token from it.
  for (int a = 0; a < 16; ++a) {
    INFO("agent " << a);
    CHECK(r.rec.at({a, 0})[17] == "0");
    CHECK(std::stod(r.rec.at({a, 0})[7]) > base_first);
  }
}

TEST_CASE("Node failure: the dualpath scheduler places nothing on a failed decode node", "[e2e]") {
  e2e::Scratch tmp;
  const std::string csv = (tmp.dir / "r.csv").string();
  // DS 27B 2P2D under the queued dualpath scheduler: at 0.04 s node 3 fails with turns in prefill and in
  // decode placed on it (7 and 1); they restart, and every first token from then on decodes on node 2.
  const auto j =
      e2e::run_ok(kEp, {"cluster.decode_nodes=2", "workload.trace=sixteen_agents.jsonl", "workload.agents=16",
                        "policy.layerwise=true", "policy.scheduler=dualpath",
                        "events=[" + node_event("node_down", 0.04, "[3]") + "]", "outputs.requests=" + csv});
  const auto rec = turns_once(csv);
  CHECK(rec.size() == 128);
  const int restarted = j.at("summary").at("failures").at("requests_restarted").get<int>();
  CHECK(restarted == 8);
  CHECK(j.at("events")[0].at("lost_in").at("decode") == 1);
  CHECK(j.at("events")[0].at("lost_in").at("prefill") == 7);
  int after = 0;
  for (const auto& [key, row] : rec) {
    if (std::stod(row[7]) <= 0.04) continue;  // first token before the failure
    INFO("agent " << key.first << " turn " << key.second);
    CHECK(row[19] == "2");
    after++;
  }
  CHECK(after >= restarted);
}

TEST_CASE("Node failure: with one-node prefill units only the failed node's unit loses its pass", "[e2e]") {
  // The case above with the model's units (8 GPUs: one node each): nodes 0 and 1 are two EP groups, each
  // with its own pass. Node 1 fails at 0.007 s: its 8 first turns are lost and restart; node 0's pass is
  // not undone, so its first turns keep the first tokens they had without the failure.
  const FirstPassFailure r = first_pass_failure({"cluster.prefill_ep_gpus=8", "cluster.decode_ep_gpus=8"});
  CHECK(r.result.at("summary").at("units").at("prefill").at("count") == 2);
  int kept = 0;
  for (int a = 0; a < 16; ++a) {
    if (r.base.at({a, 0})[17] != "0") continue;  // its first turn was prefilled on node 1
    INFO("agent " << a);
    // The same first token: node 0's pass went on (to within rounding: the failure's event in the middle of
    // SimGrid's activities updates what they have left in two steps; a pass undone and done again would
    // move it by a whole pass, milliseconds).
    CHECK(std::stod(r.rec.at({a, 0})[7]) == Approx(std::stod(r.base.at({a, 0})[7])).epsilon(1e-12));
    kept++;
  }
  CHECK(kept == 8);
}
