// End-to-end checks of the queued `dualpath` scheduler (DualPath §6.1) on the defects it once had: whole
// prefill nodes left without work (and their storage NICs idle), and DE HBM promised to one-token turns
// and never given back, which shrank every DE's HBM until the run deadlocked.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

// Per prefill node: storage bytes read and GPU busy seconds (summed over its GPUs).
struct NodeLoads {
  std::vector<double> read, busy;
};

NodeLoads prefill_node_loads(const nlohmann::json& r) {
  std::map<int, double> read, busy;
  for (const auto& e : r.at("resources").at("gpu"))
    if (e.at("role") == "prefill") busy[e.at("node").get<int>()] += e.at("busy_s").get<double>();
  for (const auto& [node, s] : busy) read[node] = e2e::node_link_bytes(r, "snic", node, "in");
  NodeLoads out;
  for (const auto& [node, b] : busy) {
    out.busy.push_back(b);
    out.read.push_back(read[node]);
  }
  return out;
}

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Every prefill node computes and reads at least half the prefill nodes' mean.
void check_no_starved_prefill_node(const nlohmann::json& r) {
  const NodeLoads l = prefill_node_loads(r);
  REQUIRE(l.busy.size() == 3);
  for (size_t n = 0; n < l.busy.size(); ++n) {
    INFO("prefill node " << n << ": GPU busy " << l.busy[n] << " s (mean " << mean(l.busy)
                         << "), storage read " << l.read[n] << " B (mean " << mean(l.read) << ")");
    CHECK(l.busy[n] >= 0.5 * mean(l.busy));
    CHECK(l.read[n] >= 0.5 * mean(l.read));
  }
}

}  // namespace

TEST_CASE("dualpath scheduler: 3P1D DS 27B, beta never binds -> every prefill node works and reads",
          "[e2e]") {
  // Before: per-node PE groups fetched on one shared tick in a fixed order, so the first group took every
  // new request (beta, 18M tokens, never stopped it): prefill node 1 computed 0 s and read 0 B, node 0
  // only its first-turn burst. Now one PE group spans the prefill nodes (Algorithm 1 compares their read
  // queues, ties spread over nodes), and per-node groups fetch on staggered ticks.
  const auto one_group = e2e::run_ok(e2e::case_file("sched_3p1d.json"));
  check_no_starved_prefill_node(one_group);
  const auto per_node = e2e::run_ok(e2e::case_file("sched_3p1d.json"), {"policy.pe_group_nodes=1"});
  check_no_starved_prefill_node(per_node);
}

TEST_CASE("dualpath scheduler: HBM-tight Qwen 32B with one-token turns -> completes, no HBM held at the end",
          "[e2e]") {
  // Before: a DE fetch promised HBM to each one-token turn, which ends at its prefill and never reached
  // the decode batch that gave promises back; the DEs' free HBM shrank by each such turn until no DE could
  // take the long turn at the head of its queue, and the run stalled at t = 1,737 s with 2,452 of 5,119
  // turns done. run_ok checks completion and (check_invariants) that no HBM or buffer is held at the end.
  const auto r = e2e::run_ok(e2e::case_file("sched_hbm_1p1d.json"));
  CHECK(r.at("summary").at("stopped_by") == "all_turns_done");
  CHECK(r.at("summary").at("turns_completed").get<int>() == 5119);
  CHECK(r.at("invariants").at("de_hbm_held_at_end_bytes").get<double>() == Approx(0).margin(1024));
}

TEST_CASE("DRAM buffer: a turn larger than the whole buffer runs once the buffer is empty -> completes",
          "[e2e]") {
  // Qwen 32B 1P1D with 8 GB buffers: long turns' KV is larger than a whole buffer and may only take it
  // empty. Before: the sums of takes and releases left about 1e-8 B "held" in an empty buffer, such a turn
  // never fitted, and the run stalled (exit 3) at t = 6,583 s.
  // (Not run_ok: its invariants assume no turn is larger than a buffer.)
  const e2e::Run run = e2e::run_dpsim(
      e2e::case_file("sched_hbm_1p1d.json"),
      {"policy.read_path=split", "policy.scheduler=least_tokens", "cluster.dram_buffer_bytes=8e9"}, 120);
  INFO(run.command << "\n" << run.stderr_text);
  REQUIRE(run.exit_code == 0);
  const auto& r = run.result;
  CHECK(r.at("complete").get<bool>());
  CHECK(r.at("summary").at("turns_completed").get<int>() == 5119);
  CHECK(r.at("invariants").at("dram_buffer_held_at_end_bytes").get<double>() == 0);
}

TEST_CASE("dualpath scheduler: a turn larger than a DE's HBM -> the group's other DEs keep taking turns",
          "[e2e]") {
  // Before: a head larger than a whole DE's HBM waited in its DE group's FIFO queue for an idle DE, and
  // every turn behind it waited too, while the group's 8 DEs drained: TTFT p90 3.87 s, mean 1.12 s. Now
  // it claims the whole HBM of one DE (the one with the most free HBM), which decodes it alone once its
  // earlier turns end, and the other 7 go on: p90 0.22 s, mean 0.26 s.
  const auto r = e2e::run_ok(e2e::case_file("sched_oversize_1p1d.json"));
  const auto& ttft = r.at("summary").at("ttft_s");
  INFO("TTFT " << ttft.dump());
  CHECK(r.at("summary").at("turns_completed").get<int>() == 387);
  CHECK(ttft.at("p90").get<double>() <= 1.0);
  CHECK(ttft.at("mean").get<double>() <= 0.5);
  // The oversize turn still ran alone: it cannot have started before its DE drained, so it is the slowest.
  CHECK(ttft.at("max").get<double>() >= 2.0);
}

TEST_CASE("DE HBM waiting fraction: one turn -> its copy-in time over its HBM time, from the latencies",
          "[e2e]") {
  // One turn of 5,000 appended and 100 generated tokens, round_robin: the loader allocates HBM after the
  // prefill, then copies the prompt KV in (H2D) and the turn joins the batch; its second token comes one
  // step later, and each later token one step (TPOT) apart. So, from the latency figures alone (TTST runs
  // from the first token to the second):
  //   waiting = TTST - TPOT,  decoding = (gen - 1) x TPOT.
  auto r =
      e2e::run_ok(e2e::case_file("io_1p1d.json"), {"workload.max_turns=1", "policy.scheduler=round_robin"});
  const auto& s = r.at("summary");
  const double ttft = s.at("ttft_s").at("mean").get<double>(), ttst = s.at("ttst_s").at("mean").get<double>(),
               tpot = s.at("tpot_s").at("mean").get<double>();
  const double waiting = ttst - tpot, decoding = 99 * tpot;
  INFO("TTFT " << ttft << " TTST " << ttst << " TPOT " << tpot);
  REQUIRE(waiting > 0);
  CHECK(s.at("de_hbm_waiting_fraction").get<double>() ==
        Approx(waiting / (waiting + decoding)).epsilon(1e-4));
  // The dualpath scheduler promises the HBM when it places the turn, before the prefill: it waits longer.
  auto q = e2e::run_ok(e2e::case_file("io_1p1d.json"), {"workload.max_turns=1", "policy.scheduler=dualpath"});
  CHECK(q.at("summary").at("de_hbm_waiting_fraction").get<double>() >
        s.at("de_hbm_waiting_fraction").get<double>() + 0.01);
}
