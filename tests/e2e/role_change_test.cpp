// End-to-end checks of role_change events (control/role_changes.h) on the I/O-bound case of events_test.cpp
// (io_1p1d.json: 1 GPU per node, a 10 GB/s SNIC, 1 MB of KV per token, Basic, round_robin) with one agent
// replaying one_agent.jsonl: its turns read 0, 5,100, 7,200 and 8,250 hit tokens and persist their appended
// and generated tokens (5,100, 2,100, 1,050, 520). round_robin takes the PEs and the DEs that take requests
// in turn, so which node reads and persists each turn follows from the role changes by hand.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/e2e/support.h"

namespace {

const std::string kRoleChangeCase = e2e::case_file("io_1p1d.json");

std::string role_change(double at, const std::string& nodes, const std::string& to) {
  return "{\"kind\":\"role_change\",\"at_s\":" + std::to_string(at) + ",\"nodes\":" + nodes + ",\"to\":\"" +
         to + "\"}";
}

// Bytes through node n's SNIC in direction dir.
using e2e::snic;

}  // namespace

TEST_CASE("Role change: a busy prefill node drains its request, then decodes", "[e2e]") {
  e2e::Scratch tmp;
  const std::string records = (tmp.dir / "r.csv").string();
  // 2P1D; node 1 (PE 1) reads turn 1 from 0.0695 s to 0.5795 s. From 0.2 s it drains: turn 1 finishes its
  // prefill there, then node 1 serves decode (1P2D).
  const auto j = e2e::run_ok(kRoleChangeCase,
                             {"cluster.prefill_nodes=2", "events=[" + role_change(0.2, "[1]", "decode") + "]",
                              "outputs.requests=" + records});
  const auto rows = e2e::read_csv(records);
  REQUIRE(rows.size() == 5);
  REQUIRE(rows[0][7] == "first_token_s");
  const double turn1_first = std::stod(rows[2][7]);
  REQUIRE(j.at("events").size() == 1);
  const auto& n = j.at("events")[0].at("nodes")[0];
  CHECK(n.at("requests_at_drain") == 1);
  CHECK(n.at("drain_from_s").get<double>() == Approx(0.2));
  // The switch comes when PE 1 lets turn 1 go: its first token.
  CHECK(n.at("switched_at_s").get<double>() == Approx(turn1_first).epsilon(1e-12));
  CHECK(j.at("events")[0].at("prefill_nodes_after") == 1);
  CHECK(j.at("events")[0].at("decode_nodes_after") == 2);
  // Reads: turn 1 on node 1 (before the change); turns 2 and 3 on node 0, the only PE left.
  CHECK(snic(j, 0, "in") == Approx(7.2e9 + 8.25e9));
  CHECK(snic(j, 1, "in") == Approx(5.1e9));
  // DEs in turn among those taking requests: turns 0, 1 on node 2 (alone), then turn 2 on node 1 (the first
  // DE), turn 3 on node 2. Node 1's SNIC persists turn 2's 1,000 appended and 50 generated tokens.
  CHECK(snic(j, 1, "out") == Approx(1.05e9));
  CHECK(snic(j, 2, "out") == Approx((5.1 + 2.1 + 0.52) * 1e9));
  // The live range: at the start 2P1D, from the drain 1P1D (a draining node counts on neither side), after
  // the switch 1P2D.
  const auto& up = j.at("pd_range").at("updates");
  REQUIRE(up.size() == 3);
  CHECK(up[1].at("why") == "role_change drain");
  CHECK(up[1].at("t_s").get<double>() == Approx(0.2));
  CHECK(up[2].at("why") == "role_change");
  CHECK(up[2].at("t_s").get<double>() == Approx(turn1_first));
  for (int k = 0; k < 3; ++k) {
    CHECK(up[k].at("P").get<double>() == std::vector<double>{2, 1, 1}[k]);
    CHECK(up[k].at("D").get<double>() == std::vector<double>{1, 1, 2}[k]);
  }
  const auto& roles = j.at("summary").at("roles");
  CHECK(roles.at("prefill_nodes_start") == 2);
  CHECK(roles.at("decode_nodes_end") == 2);
  REQUIRE(roles.at("switches").size() == 1);
  CHECK(roles.at("switches")[0].at("t_s").get<double>() == Approx(turn1_first));
}

TEST_CASE("Role change: an idle decode node switches at once and prefills the next turns", "[e2e]") {
  // 1P2D; turn 0 decodes on node 1, node 2 is idle at 0.01 s and becomes a prefill node at once: the PEs on
  // node 0 and node 2 then take turns 1..3 in turn (node 2: turns 1 and 3), every DE-side turn on node 1.
  const auto j = e2e::run_ok(
      kRoleChangeCase, {"cluster.decode_nodes=2", "events=[" + role_change(0.01, "[2]", "prefill") + "]"});
  const auto& n = j.at("events")[0].at("nodes")[0];
  CHECK(n.at("requests_at_drain") == 0);
  CHECK(n.at("drain_s").get<double>() == 0);
  CHECK(snic(j, 2, "in") == Approx(5.1e9 + 8.25e9));
  CHECK(snic(j, 0, "in") == Approx(7.2e9));
  CHECK(snic(j, 1, "out") == Approx((5.1 + 2.1 + 1.05 + 0.52) * 1e9));
  CHECK(snic(j, 2, "out") == 0);
  CHECK(j.at("summary").at("turns_completed") == 4);
}

TEST_CASE("Role change: a node named twice takes the second change once the first has switched it", "[e2e]") {
  // Node 1 drains from 0.2 s to turn 1's first token (as above); the change back to prefill, due at 0.3 s,
  // begins then, finds the node idle and switches it back at once: 2P1D again, so turn 2 goes to PE 0 and
  // turn 3 to PE 1 (round robin over both PEs), and no DE ever runs on node 1.
  const auto j = e2e::run_ok(
      kRoleChangeCase, {"cluster.prefill_nodes=2", "events=[" + role_change(0.2, "[1]", "decode") + "," +
                                                       role_change(0.3, "[1]", "prefill") + "]"});
  const auto& first = j.at("events")[0].at("nodes")[0];
  const auto& second = j.at("events")[1].at("nodes")[0];
  CHECK(second.at("from") == "decode");
  CHECK(second.at("drain_from_s").get<double>() == first.at("switched_at_s").get<double>());
  CHECK(second.at("switched_at_s").get<double>() == first.at("switched_at_s").get<double>());
  CHECK(snic(j, 1, "out") == 0);
  CHECK(snic(j, 0, "in") == Approx(7.2e9));
  CHECK(snic(j, 1, "in") == Approx(5.1e9 + 8.25e9));
  CHECK(j.at("summary").at("roles").at("switches").size() == 2);
}

TEST_CASE("Role change: a prefill node that joins the decode EP group carries its exchange", "[e2e]") {
  // ep_2p1d.json: one turn of DS 27B on 2P1D of the paper's node. Alone, the decode node's EP group stays in
  // the node (no CNIC exchange); once node 1 joins the decode role at 0.2 s (after the turn's first token at
  // 0.145 s, before its end at 0.338 s) the group spans two nodes, and both send the same decode exchange
  // through their CNICs.
  const std::string ep = e2e::case_file("ep_2p1d.json");
  auto cnic_bytes = [](const nlohmann::json& j, int node, int gpu) {
    for (const auto& l : j.at("resources").at("cnic"))
      if (l.at("node") == node && l.at("gpu") == gpu && l.at("direction") == "write")
        return l.at("bytes").get<double>();
    return -1.0;
  };
  const auto before = e2e::run_ok(ep);
  const auto after = e2e::run_ok(ep, {"events=[" + role_change(0.2, "[1]", "decode") + "]"});
  REQUIRE(after.at("events")[0].at("nodes")[0].at("switched_at_s").get<double>() == Approx(0.2));
  // GPU 1 of the decode node: no KV crosses it (the turn's KV goes to DE 0), only the exchange.
  CHECK(cnic_bytes(before, 2, 1) == 0);
  const double decode_exchange = cnic_bytes(after, 2, 1);
  CHECK(decode_exchange > 0);
  // Node 1's CNICs: its prefill-pass exchange (as node 0's GPU 1, which carries no KV either) plus the
  // decode exchange.
  CHECK(cnic_bytes(after, 1, 1) == Approx(cnic_bytes(after, 0, 1) + decode_exchange).epsilon(1e-9));
  CHECK(after.at("summary").at("turns_completed") == 1);
}

TEST_CASE("Role change: an idle node of a lock-step prefill group leaves it at the end of the pass it is in",
          "[e2e]") {
  // ep_2p1d.json made 3P1D with 48 agents of the 32K dataset (6 turns): DS 27B's prefill EP group spans the
  // three prefill nodes, whose GPUs run every pass together. Node 2 holds no request at 3.25 s (the last it
  // prefilled had its first token before), but the group is in a pass, node 2's GPUs with it: the node
  // switches when that pass ends, i.e. at the first token of the turns that pass prefilled.
  e2e::Scratch tmp;
  const std::string records = (tmp.dir / "r.csv").string();
  const auto j =
      e2e::run_ok(e2e::case_file("ep_2p1d.json"),
                  {"cluster.prefill_nodes=3", "workload.trace=", "workload.generator.dataset=32k",
                   "workload.agents=48", "workload.max_turns=6",
                   "events=[" + role_change(3.25, "[2]", "decode") + "]", "outputs.requests=" + records});
  const auto& n = j.at("events")[0].at("nodes")[0];
  CHECK(n.at("requests_at_drain") == 0);
  const double sw = n.at("switched_at_s").get<double>();
  CHECK(sw > 3.25);
  const auto rows = e2e::read_csv(records);
  REQUIRE(rows[0][7] == "first_token_s");
  REQUIRE(rows[0][17] == "pe_node");
  int ended_then = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (std::abs(std::stod(rows[i][7]) - sw) < 1e-9) ended_then++;
    if (rows[i][17] == "2") CHECK(std::stod(rows[i][7]) < 3.25);  // nothing prefilled on node 2 after it
  }
  CHECK(ended_then > 0);
  CHECK(j.at("summary").at("turns_completed") == 288);
}

TEST_CASE("Role change: with the queued dualpath scheduler the drained node's engines are offered nothing",
          "[e2e]") {
  // As the first case, with the dualpath scheduler: its group fetches see only the engines that take
  // requests, so after 0.2 s no turn is placed on node 1's PE, and node 1 switches at the first token of the
  // turn it was prefilling.
  e2e::Scratch tmp;
  const std::string records = (tmp.dir / "r.csv").string();
  const auto j = e2e::run_ok(
      kRoleChangeCase, {"cluster.prefill_nodes=2", "policy.scheduler=dualpath",
                        "events=[" + role_change(0.2, "[1]", "decode") + "]", "outputs.requests=" + records});
  const auto rows = e2e::read_csv(records);
  REQUIRE(rows.size() == 5);
  REQUIRE(rows[0][17] == "pe_node");
  const auto& n = j.at("events")[0].at("nodes")[0];
  CHECK(n.at("requests_at_drain") == 1);
  double last_on_node1 = -1;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i][17] != "1") continue;
    CHECK(std::stod(rows[i][2]) < 0.2);  // issued before the drain
    last_on_node1 = std::max(last_on_node1, std::stod(rows[i][7]));
  }
  CHECK(n.at("switched_at_s").get<double>() == Approx(last_on_node1).epsilon(1e-12));
}

TEST_CASE("Role change: with one-node units a prefill node that joins decode joins one unit, not the role",
          "[e2e]") {
  // ep_2p1d.json on 2P2D with the model's units (8 GPUs: one node each): decode units 0 (node 2) and 1
  // (node 3). The turn decodes on DE 0, in unit 0. Node 1 joins decode at 0.05 s and is dealt to unit 0
  // (membership.h), which then spans two nodes and exchanges over both nodes' CNICs; unit 1 stays in node 3
  // and exchanges nothing over its CNICs; the one-node prefill units never did.
  const std::string ep = e2e::case_file("ep_2p1d.json");
  const std::vector<std::string> units = {"cluster.decode_nodes=2", "cluster.prefill_ep_gpus=8",
                                          "cluster.decode_ep_gpus=8"};
  auto cnic_bytes = [](const nlohmann::json& j, int node, int gpu) {
    for (const auto& l : j.at("resources").at("cnic"))
      if (l.at("node") == node && l.at("gpu") == gpu && l.at("direction") == "write")
        return l.at("bytes").get<double>();
    return -1.0;
  };
  const auto before = e2e::run_ok(ep, units);
  auto sets = units;
  sets.push_back("events=[" + role_change(0.05, "[1]", "decode") + "]");
  const auto after = e2e::run_ok(ep, sets);
  REQUIRE(after.at("events")[0].at("nodes")[0].at("switched_at_s").get<double>() == Approx(0.05));
  CHECK(after.at("summary").at("units").at("decode").at("count") == 2);
  // GPU 1 of each node carries no KV (the turn's KV goes through GPU 0s): only exchange, if any.
  CHECK(cnic_bytes(before, 2, 1) == 0);
  const double decode_exchange = cnic_bytes(after, 2, 1);
  CHECK(decode_exchange > 0);
  CHECK(cnic_bytes(after, 1, 1) == Approx(decode_exchange).epsilon(1e-9));  // the joiner: unit 0's exchange
  CHECK(cnic_bytes(after, 3, 1) == 0);                                      // unit 1: within its node
  CHECK(cnic_bytes(after, 0, 1) == 0);                                      // prefill unit 0: within node 0
  CHECK(after.at("summary").at("turns_completed") == 1);
}
