// PrefixStore: a KV tier that holds, per agent, the prefix of its context whose KV is stored, and gives
// up prefixes when it is over its capacity (pure; no SimGrid). Storage keeps an agent's KV as it is
// persisted and a later turn of the agent finds its context there (DualPath §A.4: hits only within a
// trajectory). With a capacity the tier is full at some point: the eviction policy (policy/eviction.h)
// picks the prefix whose tail goes, and a later turn of that agent finds only what is left: the rest of
// its context is computed again (its hit becomes miss).
//
// Accounting in tokens; the owner converts to bytes. A turn's lookup pins its agent's prefix until the
// turn's end (a prefix being read is not evicted), and the turn's end stores the agent's whole context
// (the KV the decode side persisted): only then does the tier count it against the capacity, and only
// then is it evicted to fit, in blocks of `block_tokens`, tails of the victims first. When every other
// prefix is pinned, the new one itself is cut to fit.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/policy/eviction.h"

namespace sim::storage {

class PrefixStore {
 public:
  // capacity_tokens = 0: unlimited (no policy is consulted, lookups serve every token asked for).
  // series_interval_s > 0: lookups are also counted per interval of that length (hit_rate_series).
  // REQUIRES: block_tokens > 0; a policy when capacity_tokens > 0.
  PrefixStore(double capacity_tokens, double block_tokens, std::unique_ptr<policy::EvictionPolicy> eviction,
              double series_interval_s = 0);

  bool limited() const { return capacity_ > 0; }
  // A turn of `key` at time `t` wants the first `tokens` tokens of its context: returns how many of them
  // are stored (unlimited: all). Pins the prefix until store().
  double lookup(int key, double tokens, double t);
  // The turn of `key` ended at `t`: the tier holds its first `tokens` tokens now (its whole context). The
  // prefix is unpinned, and prefixes are evicted until the tier fits its capacity.
  void store(int key, double tokens, double t);
  // The turn of `key` ended at `t` and left the prefix as it was: unpinned.
  void release(int key, double t);

  struct Counters {
    double asked_tokens = 0;    // over lookups: context tokens asked for
    double served_tokens = 0;   // of them, found stored
    double evicted_tokens = 0;  // given up to fit the capacity
    int64_t evictions = 0;      // prefixes trimmed (one per victim per store)
    double stored_tokens = 0;   // held now
    double peak_stored_tokens = 0;
  };
  const Counters& counters() const { return n_; }
  // Per series interval: (asked, served) tokens of the lookups made in it.
  const std::vector<std::pair<double, double>>& series() const { return series_; }

 private:
  struct Entry {
    double tokens = 0;
    int pins = 0;
  };
  void evict_to_fit();

  double capacity_, block_;
  std::unique_ptr<policy::EvictionPolicy> eviction_;
  double series_interval_;
  std::unordered_map<int, Entry> entries_;
  Counters n_;
  std::vector<std::pair<double, double>> series_;
};

}  // namespace sim::storage
