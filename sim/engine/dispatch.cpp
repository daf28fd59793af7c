// Queued scheduling (DualPath §6.1): engine groups (policy.pe_group_nodes prefill nodes per PE group, one
// decode node per DE group) fetch work from the scheduler on the ticks of policy.fetch_period_s. A
// request waits in the global PE queue until a PE group's fetch gives it a PE (Algorithm 1), then in the
// global DE queue until a DE group's fetch routes it to a DE group (phase 1: least total tokens) and that
// group gives it a DE with HBM for it (phase 2); then its read side is chosen and its reads queued.
//
// A group fetches at the next tick only when that fetch could assign something: new requests arrived,
// or load left one of its engines (a PE's prefill finished, a DE's request finished and freed HBM). A
// fetch that stops for want of an engine is not repeated until then. This gives the decisions of fetching
// on every tick at a cost of O(changes), not O(ticks x groups).
#include <algorithm>
#include <cmath>

#include "sim/core/check.h"
#include "sim/engine/cluster.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

namespace {
constexpr size_t kFetchWindow = 512;  // requests from a queue's head offered to one fetch
}

// The PE fetcher runs when its group is marked and the queue is not empty: notify when either becomes
// true with the other holding (a mark on an empty queue, then a first request, must wake it).
void Cluster::mark_pe_group(int group) {
  const bool was = pe_dirty_[group];
  pe_dirty_[group] = 1;
  if (!was || pe_queue_.size() == 1) pe_fetch_cv_[group]->notify_all();
}

void Cluster::mark_de_group(int group) {
  if (de_dirty_[group]) return;
  de_dirty_[group] = 1;
  de_fetch_cv_[group]->notify_all();
}

// Groups fetch on staggered ticks, as engine groups that fetch on their own clocks do: on a shared tick
// the groups would fetch in SimGrid's wake-up order, the same group first every time, and under a loose
// beta that group would take every new request (the others' engines starving).
void Cluster::wait_fetch_tick(int group, int groups) {
  const double period = sc_.policy.fetch_period_s;
  const double phase = period * group / groups;
  const double t = engine::now();
  const double tick = std::ceil((t - phase) / period - 1e-9) * period + phase;
  if (tick > t) {
    timed_started();
    engine::sleep_for(tick - t);
    rec_->timed_in_flight--;
  }
}

void Cluster::pe_fetcher(int g) {
  std::vector<policy::RequestInfo> head;
  while (true) {
    lock_when(pe_fetch_cv_[g], [&]() { return !pe_dirty_[g] || pe_queue_.empty(); }).unlock();
    if (finished_) return;
    wait_fetch_tick(g, static_cast<int>(pe_sched_groups_.size()));
    std::unique_lock<sg4::Mutex> lock(*mutex_);
    pe_dirty_[g] = 0;
    head.clear();
    for (size_t i = 0; i < pe_queue_.size() && i < kFetchWindow; ++i) head.push_back(info(pe_queue_[i]));
    const policy::Assignments a = scheduler_->fetch_pe(head, pe_sched_groups_[g], view());
    for (size_t k = 0; k < a.size(); ++k) {
      SIM_CHECK(a[k].first == static_cast<int>(k), "fetch_pe assigned queue index {} in place {}", a[k].first,
                k);
      const RequestId id = pe_queue_[k];
      table_[id].pe = a[k].second;
      pe_load(a[k].second).seq++;
      pe_load(a[k].second).tok += table_[id].hit + table_[id].miss;
      de_queue_.push_back(id);
    }
    pe_queue_.erase(pe_queue_.begin(), pe_queue_.begin() + static_cast<long>(a.size()));
    // The whole window taken: the next window may go too.
    if (a.size() == head.size() && !pe_queue_.empty()) pe_dirty_[g] = 1;
    if (!a.empty())
      for (int d = 0; d < static_cast<int>(de_sched_groups_.size()); ++d) mark_de_group(d);
  }
}

void Cluster::de_fetcher(int g) {
  std::vector<policy::RequestInfo> queue;
  std::vector<RequestId> placed;
  auto need = [this](const Request& r) { return (r.hit + r.miss + r.gen) * kv_token_; };
  while (true) {
    lock_when(de_fetch_cv_[g], [&]() { return !de_dirty_[g]; }).unlock();
    if (finished_) return;
    // DE groups share the tick: phase 1 routes the whole global queue by tokens whichever group drains
    // it, and phase 2 serves only the group's private queue, so their order favours none.
    wait_fetch_tick(0, 1);
    std::unique_lock<sg4::Mutex> lock(*mutex_);
    de_dirty_[g] = 0;
    // Phase 1: the global queue is drained into the groups' private queues.
    if (!de_queue_.empty()) {
      queue.clear();
      for (RequestId id : de_queue_) queue.push_back(info(id));
      const std::vector<int> to = scheduler_->route_de(queue, de_sched_groups_, de_private_tok_, view());
      SIM_CHECK(to.size() == queue.size(), "route_de routed {} of {} requests", to.size(), queue.size());
      for (size_t i = 0; i < to.size(); ++i) {
        de_private_[to[i]].push_back(de_queue_[i]);
        de_private_tok_[to[i]] += queue[i].hit_tokens + queue[i].miss_tokens + queue[i].gen_tokens;
        if (to[i] != g) mark_de_group(to[i]);
      }
      de_queue_.clear();
      de_dirty_[g] = 0;
    }
    // Phase 2: this group's private queue.
    auto& mine = de_private_[g];
    placed.clear();
    while (!mine.empty()) {
      queue.clear();
      for (size_t i = 0; i < mine.size() && i < kFetchWindow; ++i) queue.push_back(info(mine[i]));
      policy::Assignments a = scheduler_->fetch_de(queue, de_sched_groups_[g], view());
      const bool whole = a.empty() && need(table_[mine.front()]) > de_hbm_kv_;
      if (whole) {
        // Larger than a whole DE's HBM (the paper's requests all fit; a model whose weights leave little
        // KV room makes such turns common): the head claims the whole HBM of the group's unclaimed DE
        // with the most free HBM (ties: least tok, lowest id), which takes nothing else until the head
        // has decoded alone. The rest of the queue goes on to the group's other DEs, instead of every DE
        // of the group waiting behind the head until one of them is idle.
        int best = -1;
        for (int d : de_sched_groups_[g]) {
          if (des_[d].whole_claimed) continue;
          const auto& e = view_.des[d];
          if (best < 0 || e.free_hbm > view_.des[best].free_hbm ||
              (e.free_hbm == view_.des[best].free_hbm && e.tok < view_.des[best].tok))
            best = d;
        }
        if (best >= 0) a.emplace_back(0, best);
      }
      for (size_t k = 0; k < a.size(); ++k) {
        const RequestId id = mine[k];
        Request& r = table_[id];
        r.de = a[k].second;
        de_load(r.de).seq++;
        de_load(r.de).tok += r.hit + r.miss + r.gen;
        // A whole-DE claim may leave free_hbm below 0: a debt the DE's earlier requests pay as they end,
        // so no fetch places anything on it meanwhile.
        r.hbm_bytes = whole ? de_hbm_kv_ : std::min(need(r), de_load(r.de).free_hbm);
        de_load(r.de).free_hbm -= r.hbm_bytes;
        r.hbm_reserved = true;
        r.hbm_whole_de = whole;
        r.t_hbm = engine::now();
        if (whole) des_[r.de].whole_claimed = true;
        de_private_tok_[g] -= r.hit + r.miss + r.gen;
        placed.push_back(id);
      }
      mine.erase(mine.begin(), mine.begin() + static_cast<long>(a.size()));
      // A whole-DE claim takes only the head: the rest of the queue is offered to the other DEs at once.
      if (a.empty() || (!whole && a.size() < queue.size())) break;
    }
    lock.unlock();
    for (RequestId id : placed) start_reads(id);
  }
}

}  // namespace sim::engine
