// `lru`: the least recently used prefix loses its tail first (a turn's lookup and its end are its uses).
#include <list>
#include <unordered_map>

#include "sim/core/check.h"
#include "sim/policy/eviction.h"

namespace sim::policy {
namespace {
class Lru : public EvictionPolicy {
 public:
  void add(int key, double, double) override {
    SIM_CHECK(where_.count(key) == 0, "lru: prefix {} added twice", key);
    order_.push_back(key);  // the uses come in time order: the newest is last
    where_[key] = std::prev(order_.end());
  }
  void remove(int key) override {
    auto it = where_.find(key);
    if (it == where_.end()) return;
    order_.erase(it->second);
    where_.erase(it);
  }
  int victim() const override { return order_.empty() ? -1 : order_.front(); }
  void trimmed(int, double) override {}  // a trim is no use: the victim keeps its place

 private:
  std::list<int> order_;  // least recently used first
  std::unordered_map<int, std::list<int>::iterator> where_;
};
}  // namespace
std::unique_ptr<EvictionPolicy> make_lru() {
  return std::make_unique<Lru>();
}
}  // namespace sim::policy
