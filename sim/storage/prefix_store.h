// PrefixStore: a KV tier that holds, per agent, the prefix of its context whose KV is stored, and gives
// up prefixes when it is over its capacity (pure; no SimGrid). Storage keeps an agent's KV as it is
// persisted and a later turn of the agent finds its context there (DualPath §A.4: hits only within a
// trajectory). With a capacity the tier is full at some point: the eviction policy (policy/eviction.h)
// picks the prefix whose tail goes, and a later turn of that agent finds only what is left: the rest of
// its context is computed again (its hit becomes miss).
//
// Accounting in tokens; the owner converts to bytes. A turn's lookup pins its agent's prefix until the
// turn has what it found (unpin(); storage: its reads are done; a DRAM tier: the turn's end), so a prefix
// is not evicted while it is used. The turn's end stores the agent's whole context (the KV its decode side
// persisted); only then does the tier count the new tokens against its capacity, and only then does it
// evict to fit, in whole blocks of `block_tokens`, tails of the victims first (the blocks of a trie's
// leaves). A prefix that lost tokens between its lookup and the turn's end keeps only what is left: the new
// blocks hang below a missing one and no lookup reaches them, so they are not counted. When every other
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
  // series_interval_s > 0: lookups are also counted per interval of that length (series()).
  // REQUIRES: block_tokens > 0; a policy when capacity_tokens > 0.
  PrefixStore(double capacity_tokens, double block_tokens, std::unique_ptr<policy::EvictionPolicy> eviction,
              double series_interval_s = 0);

  bool limited() const { return capacity_ > 0; }
  // A turn of `key` at time `t` wants the first `tokens` tokens of its context: returns how many of them
  // are stored (unlimited: all). Pins the prefix until unpin() or store().
  double lookup(int key, double tokens, double t);
  // The turn of `key` has what it found, at `t`: the prefix may be evicted again. No effect when the
  // turn's pin has ended already.
  void unpin(int key, double t);
  // The turn of `key` ended at `t`: the tier holds its first `tokens` tokens now (its whole context), or
  // what is left of the prefix when some of it was evicted since the lookup. Ends the pin if it was still
  // on, then evicts until the tier fits its capacity.
  void store(int key, double tokens, double t);
  // The turn of `key` ended at `t` and left the prefix as it was: its pin ends.
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
  // Their interval: series_interval_s, doubled when the series grew long (core/series_bound.h).
  double series_interval_s() const { return series_interval_; }

 private:
  struct Entry {
    double tokens = 0;
    double found = 0;     // what the last lookup found (a store extends the prefix only if it is all there)
    bool pinned = false;  // looked up, not yet unpinned
  };
  // The prefix may be evicted from now: the policy sees it as used at `t` (when it holds tokens).
  void evictable(int key, const Entry& e, double t);
  void evict_to_fit();

  double capacity_, block_;
  std::unique_ptr<policy::EvictionPolicy> eviction_;
  double series_interval_;
  std::unordered_map<int, Entry> entries_;
  Counters n_;
  std::vector<std::pair<double, double>> series_;
};

}  // namespace sim::storage
