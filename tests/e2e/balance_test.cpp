// End-to-end check of the `dualpath` scheduler's storage-NIC balance (DualPath §7.5; issue 5): on three
// machines with an uneven trace, round-robin placement piles the long contexts' reads on one decode node's
// SNIC while the dualpath scheduler (DE groups by least total unfinished tokens, PEs by read queue) spreads
// them, so balance.snic_max_avg (max/avg SNIC traffic per window, averaged over busy windows) is lower.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

// 1P2D of hopper-8x400g with DS 27B; 64 agents over the 32 trajectories of balance_uneven.jsonl, where
// trajectories 0-7 and 16-23 have a 24K-token context and the others 0.6K, so round robin's first pass over
// the 16 DEs sends every long context to the first decode node. Read path dualpath (the scenario's), the
// scheduler set per run. (With 32 agents the run, 2.4 s long, is mostly its opening transient: the gap
// between the two schedulers there moved with the decode step time, from 0.24 to 0.02. With 128 agents
// and the kernel-rate compute model, the read path's shorter-queue choice evens the whole run's SNIC bytes
// under either scheduler: max/min 1.055 against 1.024, while the windowed ratio still separates them,
// 1.29 against 1.16. At 64 agents: 1.157 against 1.070, and 1.58 against 1.24.)
const std::string kBalanceCase = e2e::case_file("balance_1p2d.json");

double snic_max_avg(const nlohmann::json& r) {
  return r.at("balance").at("snic_max_avg").get<double>();
}

nlohmann::json run_with(const std::string& scheduler) {
  // run_ok also checks every turn completed (summary.turns_completed == turns_total) and the byte
  // invariants; the explicit checks below repeat the completion one for this test's claim.
  auto r = e2e::run_ok(kBalanceCase, {"policy.scheduler=" + scheduler}, 60);
  CHECK(r.at("complete").get<bool>());
  CHECK(r.at("summary").at("turns_completed") == r.at("summary").at("turns_total"));
  // 32 agents replay the trajectories (8 turns); the other 32 open with a synthetic round (traces/README.md).
  CHECK(r.at("summary").at("turns_total").get<int>() == 32 * 8 + 32 * 9);
  return r;
}

}  // namespace

TEST_CASE(
    "SNIC balance: three nodes, uneven trace -> dualpath scheduler has a lower snic_max_avg than "
    "round_robin",
    "[e2e]") {
  const auto rr = run_with("round_robin");
  const auto dp = run_with("dualpath");
  const double rr_ratio = snic_max_avg(rr);
  const double dp_ratio = snic_max_avg(dp);
  INFO("snic_max_avg: round_robin " << rr_ratio << ", dualpath " << dp_ratio);
  // 3 SNICs: the ratio lies in [1, 3]. The margin is well above run-to-run noise (runs are deterministic)
  // and below the gap this trace produces; swapping the two schedulers makes the check fail.
  CHECK(rr_ratio >= 1.0);
  CHECK(dp_ratio >= 1.0);
  CHECK(dp_ratio <= 3.0 + 1e-9);
  CHECK(dp_ratio < rr_ratio - 0.05);
  // Over the whole run too: the bytes read through each node's SNIC are closer to even (max / min).
  auto spread = [](const nlohmann::json& r) {
    double lo = 1e300, hi = 0;
    for (int n = 0; n < 3; ++n) {
      const double b = e2e::node_link_bytes(r, "snic", n, "in");
      lo = std::min(lo, b);
      hi = std::max(hi, b);
    }
    return hi / lo;
  };
  INFO("SNIC bytes max/min: round_robin " << spread(rr) << ", dualpath " << spread(dp));
  CHECK(spread(dp) < spread(rr) - 0.05);
}
