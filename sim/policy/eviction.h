// Eviction policies: which stored KV prefix gives up its tail next when a tier with a capacity is full
// (storage/prefix_store.h). The store tells the policy which prefixes may be evicted (those no turn is
// using), when each was last used and how many tokens it holds; the policy names the victim.
// Storage keeps its index as a trie of Full Blocks (DualPath §A.5), so a prefix loses its last blocks
// first: the store trims the victim's tail, and the victim stays a candidate while tokens remain.
#pragma once

#include <memory>

namespace sim::policy {

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // The prefix of `key` may be evicted from now on: it was last used at `t` and holds `tokens`.
  virtual void add(int key, double t, double tokens) = 0;
  // The prefix of `key` is no candidate now (a turn uses it, it is empty, or it is added again with a newer
  // use). No effect when it is not one.
  virtual void remove(int key) = 0;
  // The prefix whose tail goes next, or -1 when no prefix may be evicted.
  virtual int victim() const = 0;
  // The victim's tail went: it holds `tokens` (> 0) now.
  virtual void trimmed(int key, double tokens) = 0;
};

}  // namespace sim::policy
