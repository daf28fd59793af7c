#include "sim/workload/agents.h"

#include <algorithm>
#include <random>

#include "sim/core/check.h"

namespace sim::workload {

namespace {

// Uniform integer in [0, n) from the raw engine output, by rejection (no modulo bias), so that the
// sequence is the same on every standard library (std::uniform_int_distribution is not).
uint64_t uniform_index(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // accept x < limit
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

// Fisher-Yates with uniform_index.
void shuffle(std::vector<int>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_index(rng, i)]);
}

}  // namespace

Turn Agent::turn(int k) const {
  SIM_CHECK(k >= 0 && k < num_turns, "agent {}: turn {} out of [0, {})", id, k, num_turns);
  if (synthetic_append > 0) {
    if (k == 0) return Turn{synthetic_append, 1, 0.0};
    return source->turns[static_cast<size_t>(k - 1)];
  }
  return source->turns[static_cast<size_t>(k)];
}

std::vector<Agent> build_offline_agents(const std::vector<Trajectory>& trajectories, int agents,
                                        int max_turns, int synthetic_first_round_tokens, uint64_t seed) {
  SIM_CHECK(agents >= 0, "agents = {}", agents);
  SIM_CHECK(agents == 0 || !trajectories.empty(), "no trajectories for {} agents", agents);
  SIM_CHECK(max_turns >= 0, "max_turns = {}", max_turns);
  SIM_CHECK(synthetic_first_round_tokens >= 1, "synthetic_first_round_tokens = {}",
            synthetic_first_round_tokens);
  const int n_traj = static_cast<int>(trajectories.size());
  std::mt19937_64 rng(seed);
  std::vector<int> order(trajectories.size());
  std::vector<Agent> out;
  out.reserve(static_cast<size_t>(agents));
  for (int i = 0; i < agents; ++i) {
    Agent a;
    a.id = i;
    if (i < n_traj) {
      a.trajectory_index = i;
    } else {
      int pos = (i - n_traj) % n_traj;
      if (pos == 0) {  // a new round of copies: a fresh permutation
        for (int k = 0; k < n_traj; ++k) order[static_cast<size_t>(k)] = k;
        shuffle(order, rng);
      }
      a.trajectory_index = order[static_cast<size_t>(pos)];
      a.synthetic_append = synthetic_first_round_tokens;
    }
    a.source = &trajectories[static_cast<size_t>(a.trajectory_index)];
    int full = static_cast<int>(a.source->turns.size()) + (a.synthetic_append > 0 ? 1 : 0);
    a.num_turns = max_turns > 0 ? std::min(full, max_turns) : full;
    out.push_back(a);
  }
  return out;
}

TurnTokens turn_tokens(const Agent& a, int k) {
  SIM_CHECK(k >= 0 && k < a.num_turns, "agent {}: turn {} out of [0, {})", a.id, k, a.num_turns);
  TurnTokens t;
  for (int i = 0; i < k; ++i) {
    Turn earlier = a.turn(i);
    t.hit += static_cast<int64_t>(earlier.append) + earlier.gen;
  }
  Turn now = a.turn(k);
  t.miss = now.append;
  t.gen = now.gen;
  return t;
}

std::vector<TurnTokens> all_turn_tokens(const Agent& a) {
  std::vector<TurnTokens> out;
  out.reserve(static_cast<size_t>(a.num_turns));
  int64_t context = 0;
  for (int k = 0; k < a.num_turns; ++k) {
    Turn turn = a.turn(k);
    out.push_back(TurnTokens{context, turn.append, turn.gen});
    context += static_cast<int64_t>(turn.append) + turn.gen;
  }
  return out;
}

WorkloadTotals workload_totals(const std::vector<Agent>& agents) {
  WorkloadTotals w;
  w.agents = static_cast<int64_t>(agents.size());
  for (const Agent& a : agents) {
    int64_t context = 0;
    for (int k = 0; k < a.num_turns; ++k) {
      Turn turn = a.turn(k);
      w.hit_tokens += context;
      w.miss_tokens += turn.append;
      w.gen_tokens += turn.gen;
      context += static_cast<int64_t>(turn.append) + turn.gen;
    }
    w.turns += a.num_turns;
  }
  return w;
}

}  // namespace sim::workload
