#include "sim/storage/prefix_store.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"
#include "sim/core/series_bound.h"

namespace sim::storage {

PrefixStore::PrefixStore(double capacity_tokens, double block_tokens,
                         std::unique_ptr<policy::EvictionPolicy> eviction, double series_interval_s)
    : capacity_(capacity_tokens),
      block_(block_tokens),
      eviction_(std::move(eviction)),
      series_interval_(series_interval_s) {
  SIM_CHECK(block_ > 0, "prefix store: block of {} tokens", block_);
  SIM_CHECK(capacity_ <= 0 || eviction_ != nullptr, "prefix store: a capacity without an eviction policy");
}

double PrefixStore::lookup(int key, double tokens, double t) {
  Entry& e = entries_[key];
  const double served = limited() ? std::min(tokens, e.tokens) : tokens;
  if (limited()) {
    SIM_CHECK(!e.pinned, "prefix store: prefix {} looked up by two turns at once", key);
    eviction_->remove(key);
    e.pinned = true;
    e.found = served;
  }
  n_.asked_tokens += tokens;
  n_.served_tokens += served;
  if (series_interval_ > 0) {
    size_t k = static_cast<size_t>(std::max(0.0, std::floor(t / series_interval_)));
    // Memory bounded whatever the run's length (core/series_bound.h): pairs merged, the interval doubled.
    while (k >= 2 * core::kMaxSeriesPoints) {
      std::vector<std::pair<double, double>> merged((series_.size() + 1) / 2, {0.0, 0.0});
      for (size_t i = 0; i < series_.size(); ++i) {
        merged[i / 2].first += series_[i].first;
        merged[i / 2].second += series_[i].second;
      }
      series_ = std::move(merged);
      series_interval_ *= 2;
      k = static_cast<size_t>(std::max(0.0, std::floor(t / series_interval_)));
    }
    if (k >= series_.size()) series_.resize(k + 1, {0.0, 0.0});
    series_[k].first += tokens;
    series_[k].second += served;
  }
  return served;
}

void PrefixStore::evictable(int key, const Entry& e, double t) {
  eviction_->remove(key);
  if (e.tokens > 0) eviction_->add(key, t, e.tokens);
}

void PrefixStore::unpin(int key, double t) {
  if (!limited()) return;
  Entry& e = entries_.at(key);
  if (!e.pinned) return;
  e.pinned = false;
  evictable(key, e, t);
}

void PrefixStore::store(int key, double tokens, double t) {
  Entry& e = entries_[key];
  // A prefix that lost its tail since the lookup stays as it is: the new blocks cannot be reached.
  const double now_held = !limited() || e.tokens >= e.found ? tokens : e.tokens;
  n_.stored_tokens += now_held - e.tokens;
  e.tokens = now_held;
  if (limited()) {
    e.pinned = false;
    evictable(key, e, t);
    evict_to_fit();
  }
  n_.peak_stored_tokens = std::max(n_.peak_stored_tokens, n_.stored_tokens);
}

void PrefixStore::release(int key, double t) {
  if (!limited()) return;
  Entry& e = entries_.at(key);
  e.pinned = false;
  evictable(key, e, t);
}

void PrefixStore::evict_to_fit() {
  while (n_.stored_tokens > capacity_) {
    const int key = eviction_->victim();
    if (key < 0) return;  // every prefix is pinned: the tier stays over until a turn ends
    Entry& e = entries_.at(key);
    // The victim's last blocks go: whole blocks from the start of its prefix are kept.
    const double need = n_.stored_tokens - capacity_;
    const double keep = std::max(0.0, std::floor((e.tokens - need) / block_) * block_);
    n_.evicted_tokens += e.tokens - keep;
    n_.stored_tokens -= e.tokens - keep;
    n_.evictions++;
    e.tokens = keep;
    if (keep > 0) {
      eviction_->trimmed(key, keep);
    } else {
      eviction_->remove(key);
    }
  }
}

}  // namespace sim::storage
