// Offline (batch / RL rollout) agents, as DualPath replays its traces (§7.3, §A.3).
//
// n agents start at t = 0; agent i replays trajectory i when i < number of trajectories. Beyond that
// every further agent is a copy: "we sample an existing trajectory and prepend a synthetic round with
// random tokens as A_1 and g_1 = 1" (§A.3). dpsim's rule (traces/README.md, "Offline replay"):
// - the first use of each trajectory is unchanged (agents 0 .. T-1, T = number of trajectories);
// - agents T, T+1, ... are copies; each gets a synthetic first round {append = S, gen = 1} before the
//   trajectory's own turns. S (synthetic_first_round_tokens) is not given by the paper; dpsim's
//   default is kDefaultSyntheticFirstRoundTokens;
// - copies are sampled in shuffled rounds: agents T .. 2T-1 use a seeded random permutation of all
//   trajectories, the next T agents another one, and so on (sampling without replacement inside a
//   round keeps the set's averages when agents is a multiple of T). The paper does not say how it
//   samples.
// A copy's total tokens are the trajectory's plus S + 1, so a copy may exceed the dataset's MaxLen.
// KV-cache hits happen only within an agent's own turns (§A.4).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/workload/trajectory.h"

namespace sim::workload {

inline constexpr int kDefaultSyntheticFirstRoundTokens = 512;  // dpsim's choice; not in the paper

struct Agent {
  int id = 0;                          // 0 .. agents-1
  const Trajectory* source = nullptr;  // not owned; the trajectory vector must outlive the agent
  int trajectory_index = 0;            // index of `source` in the vector given to the builder
  int32_t synthetic_append = 0;        // > 0: a synthetic round {synthetic_append, gen 1} comes first
  int num_turns = 0;                   // turns replayed, counting the synthetic round; <= max_turns

  // Turn k of the replay (0 <= k < num_turns), the synthetic round included.
  Turn turn(int k) const;
};

// Builds `agents` offline agents over `trajectories` (see above). max_turns > 0 truncates every agent
// to its first max_turns turns (the synthetic round counts); 0 keeps whole trajectories.
// REQUIRES: agents >= 0; !trajectories.empty() when agents > 0; max_turns >= 0;
// synthetic_first_round_tokens >= 1.
std::vector<Agent> build_offline_agents(const std::vector<Trajectory>& trajectories, int agents,
                                        int max_turns, int synthetic_first_round_tokens, uint64_t seed);

// Tokens of one turn of the replay. hit = all earlier context = sum over earlier turns of append + gen
// (read from storage: KV hits only within the agent); miss = this turn's append (computed); gen = this
// turn's generated tokens. The next turn's hit is hit + miss + gen.
struct TurnTokens {
  int64_t hit = 0;
  int64_t miss = 0;
  int64_t gen = 0;
};

// O(k); for tests and hand computations. An engine walking the turns keeps the running sum instead.
TurnTokens turn_tokens(const Agent& a, int k);
// All of an agent's turns, in order, O(num_turns).
std::vector<TurnTokens> all_turn_tokens(const Agent& a);

struct WorkloadTotals {
  int64_t agents = 0;
  int64_t turns = 0;
  int64_t hit_tokens = 0;   // sum of hit over all turns (tokens loaded from storage)
  int64_t miss_tokens = 0;  // sum of append over all turns (tokens prefilled)
  int64_t gen_tokens = 0;   // sum of gen over all turns (tokens decoded)
};
WorkloadTotals workload_totals(const std::vector<Agent>& agents);

}  // namespace sim::workload
