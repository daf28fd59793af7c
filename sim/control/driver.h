// Driver: the life of the agents' turns. It releases each turn at its time (offline agents' first turns at
// 0, online agents at their Poisson arrivals, trace-replay requests at their trace arrivals), submits it to
// the dispatcher, and when a turn is done records its latencies and issues the agent's next turn. One
// actor, on the control host; pending releases wait in a min-heap it sleeps on (no actor per agent or
// per request). When every agent is done it ends the run (stopped_by "all_turns_done", at that time).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/unloaded.h"
#include "sim/engine/context.h"
#include "sim/workload/agents.h"
#include "sim/workload/replay_turn.h"

namespace sim::engine {
class Dispatcher;
}  // namespace sim::engine

namespace sim::control {

// Trace replay: a turn whose tokens the trace gives (workload/replay_turn.h).
using workload::ReplayTurn;

// First tokens over time, for the online stop rules: turns whose first token came, with their TTFT, and
// the issued turns still waiting for theirs.
struct TtftLog {
  struct FirstToken {
    double t;         // time of the first token
    float ttft;       // its TTFT
    bool first_turn;  // the agent's (or session's) first turn
    float bound;      // slo.mode = relative: its TTFT bound (slo.ttft_scale x its unloaded TTFT); else 0
  };
  std::vector<FirstToken> first_tokens;  // online only, in time order
  double mean_turns = 1;                 // turns per agent (or session) of the workload, set at start
  int waiting = 0;                       // issued turns without a first token
  double waiting_issue_sum = 0;          // the sum of their issue times
  std::multiset<std::pair<double, float>> waiting_issues;  // their issue times and bounds (online only)
  // Mean TTFT over (now - window, now]: turns whose first token came in it count their TTFT, turns still
  // waiting for their first token count their age. Returns -1 when fewer than min_turns turns count.
  double windowed_mean(double now, double window_s, int min_turns) const;
  // The same turns' TTFT (and ages) at a percentile p in (0, 100], nearest rank as in the summary; -1
  // when fewer than min_turns turns count.
  double windowed_percentile(double now, double window_s, int min_turns, double p) const;
  // slo.mode = relative: the share of the same turns within their bound (a waiting turn is when its age
  // is); -1 when fewer than min_turns turns count.
  double windowed_attainment(double now, double window_s, int min_turns) const;
  // Over the turns whose first token came in (now - window_s, now]: how many, and how many were first turns.
  std::pair<int, int> window_counts(double now, double window_s) const;
};

class Driver : public engine::TurnEvents {
 public:
  // REQUIRES: every reference outlives the driver.
  Driver(engine::EngineContext& ctx, const std::vector<workload::Agent>& agents,
         engine::Dispatcher& dispatcher);

  // Online mode: agent i's first turn is issued at arrivals[i] (seconds, non-decreasing) instead of 0.
  // REQUIRES: before start(); arrivals.size() == number of agents.
  void set_arrivals(std::vector<double> arrivals);
  // Trace replay: the sessions replace the agents (session s is agent s). Open loop (online): turn k of a
  // session is issued at max(its arrival_s, the time turn k-1 finished). Closed loop (offline,
  // workload/closed_loop.h): first turns at 0, turn k its think_s after turn k-1 finished. REQUIRES: before
  // start(); every session non-empty, turns in arrival order.
  void set_replay(std::vector<std::vector<ReplayTurn>> sessions, bool closed_loop);

  void start();
  void wake_all();

  // A node failure lost request `lost` (control/node_failures.h, scenario event `event`): its turn runs
  // again as a new request, issued now with the turn's first issue time (its TTFT and JCT count the loss),
  // its hit what storage holds of the context now. The caller retires `lost` afterwards.
  void restart(engine::RequestId lost, int event);
  void first_token(engine::RequestId id) override;
  void turn_done(engine::RequestId id, double t_done) override;

  int agents_arrived() const { return agents_arrived_; }
  const TtftLog& ttft_log() const { return ttft_; }

 private:
  // slo.mode = relative: the turn's TTFT bound for the stop rule (slo.ttft_scale x its unloaded TTFT); else
  // 0.
  float ttft_bound(const engine::Request& r) const;
  void loop();
  void issue(int agent);
  void release_at(double t, int agent);
  // A turn issued at t_issue waits for its first token (the TTFT log's waiting turns).
  void wait_first_token(double t_issue, float bound);
  // Adds the request to the store and submits it to the dispatcher.
  void submit(const engine::Request& r);
  // outputs.requests: the record of a turn that is done.
  void record(const engine::Request& r, const engine::TurnSample& s, double t_done);
  int num_agents() const;
  int num_turns(int agent) const;

  engine::EngineContext& c_;
  const std::vector<workload::Agent>& agents_;
  engine::Dispatcher& dispatcher_;
  const bool online_;                              // workload.mode: the TTFT log is kept online only
  std::optional<cost::UnloadedLatency> unloaded_;  // slo.mode = relative: each turn's unloaded latency
  std::vector<int> next_turn_;                     // per agent
  std::vector<double> context_;                    // per agent: tokens of context so far (the next hit)
  std::vector<double> arrivals_;                   // per agent: first-turn time (empty: all at 0)
  std::vector<std::vector<ReplayTurn>> replay_;    // trace replay sessions (empty: agents)
  bool closed_loop_ = false;                       // replay: issued by think_s (offline), not arrival_s
  std::vector<std::pair<double, int>> releases_;   // min-heap of (time, agent) on std::greater
  TtftLog ttft_;
  int agents_arrived_ = 0;
  int agents_left_ = 0;
  simgrid::s4u::ConditionVariablePtr cv_;
};

}  // namespace sim::control
