// Autoscaler: control.autoscale. Converts node roles at run time from live signals, as the planners of
// production serving stacks do: every interval_s it reads the latency of each side against its SLO bound
// (slo.ttft_s for prefill, slo.tpot_s for decode) and, when one side misses its bound while the other is
// relaxed, converts one node of the relaxed side (control/role_changes.h: it drains, then switches).
//
// policy "slo" (scenarios/README.md, "control"):
//   prefill signal: the mean TTFT over the last interval_s, turns still waiting for their first token
//     counting their age (the queueing on the prefill side; TtftLog::windowed_mean), online runs; offline
//     runs take the turns completed in the interval;
//   decode signal: the mean TPOT of the turns completed in the interval (the decode batch's step time);
//   where the turns wait: the mean fill of each side's DRAM buffers now (read-ahead KV waits in the PE
//     buffers for the prefill, in the DE buffers for decode HBM); a side whose buffers are at least `relax`
//     full blocks;
//   prefill misses (TTFT > slo.ttft_s, decode not blocking) and decode relaxed (TPOT < relax x
//     slo.tpot_s): a decode node becomes a prefill node; decode misses (TPOT > slo.tpot_s with prefill
//     relaxed, TTFT < relax x slo.ttft_s; or TTFT > slo.ttft_s with decode blocking and prefill not): the
//     reverse; with both sides blocking, the cluster is short of more than a role split gives: nothing;
//   the node converted is the one of its role holding the fewest requests (ties: the lowest index);
//   never the last node of a role; no conversion while another drains, nor within min_interval_s of the
//   previous one's start (its drain is the conversion's cost: the node serves nothing new meanwhile);
//   with guard, a conversion that would take the live P/D (control/live_range.h) out of the bottleneck-free
//   range while it is inside is vetoed (and counted).
// One daemon on the control host; nothing without control.autoscale.policy = "slo".
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "sim/control/driver.h"
#include "sim/control/role_changes.h"
#include "sim/cost/live_range.h"

namespace sim::control {

class Autoscaler {
 public:
  Autoscaler(engine::EngineContext& c, RoleChanges& changes, const TtftLog& ttft);
  // The live range the guard reads (control/live_range.h), or null (no guard).
  void watch(const cost::LivePoint* live) { live_ = live; }
  bool on() const { return c_.sc.control.autoscale.policy != "off"; }
  size_t actors() const { return on() ? 1 : 0; }
  void start();
  // summary.autoscale: the policy, the ticks, every conversion (when, which node, to what, the signals
  // then, and what its drain did) and the vetoed ones.
  nlohmann::json to_json() const;

 private:
  struct Action {
    double t_s = 0;
    int node = 0;
    platform::NodeRole to = platform::NodeRole::kPrefill;
    double ttft_s = 0, tpot_s = 0;
    double pe_fill = 0, de_fill = 0;  // the sides' DRAM buffers' mean fill then
    size_t change = 0;                // RoleChanges::request's index
  };
  void loop();
  // The node of `role` holding the fewest requests (ties: the lowest index), or -1.
  int pick(platform::NodeRole role) const;
  // The mean fill of the DRAM buffers of the nodes taking requests of `role`, in [0, 1].
  double buffer_fill(platform::NodeRole role) const;

  engine::EngineContext& c_;
  RoleChanges& changes_;
  const TtftLog& ttft_;
  const cost::LivePoint* live_ = nullptr;
  size_t cursor_ = 0;  // rec.turns already seen
  int ticks_ = 0, vetoed_ = 0;
  double last_start_s_ = -1;
  std::vector<Action> actions_;
};

}  // namespace sim::control
