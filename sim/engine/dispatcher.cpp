#include "sim/engine/dispatcher.h"

#include <algorithm>
#include <cmath>

#include "sim/config/units.h"
#include "sim/core/check.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/prefill_service.h"
#include "sim/engine/reader_service.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

namespace {
constexpr size_t kFetchWindow = 512;  // requests from a queue's head offered to one fetch
}

Dispatcher::Dispatcher(EngineContext& ctx, std::unique_ptr<policy::SchedulerPolicy> scheduler,
                       std::unique_ptr<policy::ReadPathPolicy> read_path)
    : c_(ctx), scheduler_(std::move(scheduler)), read_path_(std::move(read_path)) {
  // Scheduling groups (DualPath §6.1: all engines of a node are in one group). PE groups: runs of
  // policy.pe_group_nodes prefill nodes (0 = one group of every PE, as in the paper's Fig. 5, where one
  // group spans two nodes: Algorithm 1 can then prefer the engines of nodes with short read queues).
  // DE groups: one per decode node (phase 1 balances tokens across them).
  const auto& prefill_nodes = c_.members.engine_nodes(platform::NodeRole::kPrefill);
  const auto& decode_nodes = c_.members.engine_nodes(platform::NodeRole::kDecode);
  const int pe_span =
      c_.sc.policy.pe_group_nodes > 0 ? c_.sc.policy.pe_group_nodes : static_cast<int>(prefill_nodes.size());
  auto nodes_of = [](const std::vector<policy::EngineLoad>& engines) {
    std::vector<int> out;
    out.reserve(engines.size());
    for (const auto& e : engines) out.push_back(e.node);
    return out;
  };
  auto group_by = [](const std::vector<int>& engine_nodes, const std::vector<int>& role_nodes, int span,
                     std::vector<std::vector<int>>& groups, std::vector<int>& group_of,
                     std::vector<int>& group_node) {
    for (size_t e = 0; e < engine_nodes.size(); ++e) {
      const int rank = static_cast<int>(std::find(role_nodes.begin(), role_nodes.end(), engine_nodes[e]) -
                                        role_nodes.begin());
      const int g = rank / span;
      if (g >= static_cast<int>(groups.size())) {
        groups.resize(g + 1);
        group_node.resize(g + 1, engine_nodes[e]);
      }
      groups[g].push_back(static_cast<int>(e));
      group_of.push_back(g);
    }
  };
  group_by(nodes_of(c_.loads.view().pes), prefill_nodes, pe_span, pe_groups_, pe_group_of_, pe_group_node_);
  group_by(nodes_of(c_.loads.view().des), decode_nodes, 1, de_groups_, de_group_of_, de_group_node_);
  de_private_.resize(de_groups_.size());
  de_private_tok_.assign(de_groups_.size(), 0.0);
  pe_dirty_.assign(pe_groups_.size(), 0);
  de_dirty_.assign(de_groups_.size(), 0);
  for (size_t i = 0; i < pe_groups_.size(); ++i) pe_fetch_cv_.push_back(sg4::ConditionVariable::create());
  for (size_t i = 0; i < de_groups_.size(); ++i) de_fetch_cv_.push_back(sg4::ConditionVariable::create());
  policy::SchedulerContext sctx;
  sctx.hardware = &c_.sc.prefill_hardware;  // alpha: a PE node's read rate; beta: a PE GPU's prefill
  sctx.engine = &c_.sc.engine;
  sctx.model = &c_.sc.model;
  sctx.alpha_tokens = c_.sc.policy.alpha_tokens;
  sctx.storage_block_tokens = c_.sc.policy.persist_block_tokens;
  sctx.beta_tokens = c_.sc.policy.beta_tokens;
  sctx.kv_bytes_per_token = c_.kv_token;
  sctx.prefill_weight_shards =
      cost::weight_shards_for_role(c_.sc.model, config::unit_gpus(c_.sc, config::UnitRole::kPrefill));
  scheduler_->configure(sctx);
}

size_t Dispatcher::actors() const {
  return scheduler_->queued() ? pe_groups_.size() + de_groups_.size() : 0;
}

void Dispatcher::start() {
  if (!scheduler_->queued()) return;
  for (int g = 0; g < static_cast<int>(pe_groups_.size()); ++g)
    engine::spawn_daemon("pe-fetch", c_.h.nodes[pe_group_node_[g]].dram, [this, g]() { pe_fetcher(g); });
  for (int g = 0; g < static_cast<int>(de_groups_.size()); ++g)
    engine::spawn_daemon("de-fetch", c_.h.nodes[de_group_node_[g]].dram, [this, g]() { de_fetcher(g); });
}

void Dispatcher::wake_all() {
  // The fetchers are daemons: woken here, they return on their own instead of being killed inside a
  // wait at the end of the run (whose unwinding would release the run mutex in a simcall).
  for (auto& cv : pe_fetch_cv_) cv->notify_all();
  for (auto& cv : de_fetch_cv_) cv->notify_all();
}

policy::RequestInfo Dispatcher::info(RequestId id) const {
  const Request& r = c_.requests[id];
  return {id, r.hit, r.miss, r.gen};
}

void Dispatcher::submit(RequestId id) {
  if (scheduler_->queued()) {
    pe_queue_.push_back(id);
    for (int g = 0; g < static_cast<int>(pe_groups_.size()); ++g) mark_pe_group(g);
    return;
  }
  const policy::ClusterView& v = c_.members.dynamic() ? accepting_view() : c_.loads.view(now());
  policy::Placement p = scheduler_->place(info(id), v);
  SIM_CHECK(p.pe >= 0 && p.pe < static_cast<int>(v.pes.size()) && p.de >= 0 &&
                p.de < static_cast<int>(v.des.size()),
            "scheduler placed a request on PE {} / DE {}", p.pe, p.de);
  if (c_.members.dynamic()) p = {v.pes[p.pe].id, v.des[p.de].id};
  place(id, p.pe, p.de);
  start_reads(id);
}

// With role changes an immediate policy sees only the engines that take new requests: the LoadBook's view
// without the others (EngineLoad::id keeps each one's engine number).
const policy::ClusterView& Dispatcher::accepting_view() {
  const policy::ClusterView& all = c_.loads.view(now());
  accepting_.now = all.now;
  accepting_.read_q = all.read_q;
  accepting_.pes.clear();
  accepting_.des.clear();
  for (const auto& e : all.pes)
    if (c_.members.accepting(e.node, platform::NodeRole::kPrefill)) accepting_.pes.push_back(e);
  for (const auto& e : all.des)
    if (c_.members.accepting(e.node, platform::NodeRole::kDecode)) accepting_.des.push_back(e);
  return accepting_;
}

std::vector<int> Dispatcher::accepting(const std::vector<int>& engines, platform::NodeRole role) const {
  std::vector<int> out;
  const auto& view = c_.loads.view();
  for (int e : engines)
    if (c_.members.accepting(role == platform::NodeRole::kPrefill ? view.pes[e].node : view.des[e].node,
                             role))
      out.push_back(e);
  return out;
}

void Dispatcher::drain(int node) {
  // Requests routed to the node's DE group but not yet on one of its DEs go back to the global DE queue,
  // at its head and in their order, for the other groups to take.
  for (int g = 0; g < static_cast<int>(de_groups_.size()); ++g) {
    if (de_group_node_[g] != node || de_private_[g].empty()) continue;
    de_queue_.insert(de_queue_.begin(), de_private_[g].begin(), de_private_[g].end());
    de_private_[g].clear();
    de_private_tok_[g] = 0;
  }
  if (!scheduler_->queued()) return;
  for (int g = 0; g < static_cast<int>(de_groups_.size()); ++g) mark_de_group(g);
}

void Dispatcher::joined() {
  if (!scheduler_->queued()) return;
  for (int g = 0; g < static_cast<int>(pe_groups_.size()); ++g) mark_pe_group(g);
  for (int g = 0; g < static_cast<int>(de_groups_.size()); ++g) mark_de_group(g);
}

void Dispatcher::forget(RequestId id) {
  de_queue_.erase(std::remove(de_queue_.begin(), de_queue_.end(), id), de_queue_.end());
  for (size_t g = 0; g < de_private_.size(); ++g) {
    auto& q = de_private_[g];
    const auto it = std::find(q.begin(), q.end(), id);
    if (it == q.end()) continue;
    const Request& r = c_.requests[id];
    de_private_tok_[g] -= r.hit + r.miss + r.gen;
    q.erase(it);
  }
}

void Dispatcher::place(RequestId id, int pe, int de) {
  Request& r = c_.requests[id];
  r.pe = pe;
  r.de = de;
  r.pe_placed = r.de_placed = true;
  c_.loads.charge_pe(pe, r);
  c_.loads.charge_de(de, r);
}

void Dispatcher::start_reads(RequestId id) {
  Request& q = c_.requests[id];
  if (q.lost) return;  // its node failed after its DE fetch placed it (control/node_failures.h)
  const policy::ClusterView& v = c_.loads.view(now());
  policy::RequestInfo ri = info(id);
  if (!c_.dram_tier.empty()) {
    // The DRAM tiers of both sides: what each holds of the hit, kept there until the turn ends.
    q.pe_cached = c_.dram_tier[c_.loads.pe_node(q.pe)].lookup(q.agent, q.hit, now());
    q.de_cached = c_.dram_tier[c_.loads.de_node(q.de)].lookup(q.agent, q.hit, now());
    ri.pe_cached_tokens = q.pe_cached;
    ri.de_cached_tokens = q.de_cached;
  }
  const policy::ReadDecision d = read_path_->choose(ri, v.pes[q.pe], v.des[q.de], v);
  q.pe_fraction = d.pe_fraction;
  q.kv_transport = d.zero_cost ? KvTransport::kFree : KvTransport::kLinks;
  const double from_storage = storage_tokens(q, true) + storage_tokens(q, false);
  if (!c_.dram_tier.empty() && q.kv_transport == KvTransport::kLinks) {
    c_.rec.dram_tier_asked_tokens += q.hit;
    c_.rec.dram_tier_served_tokens += q.hit - from_storage;
  }
  if (wire_bytes(q, from_storage) <= 0) {  // nothing to read (no hit, all in DRAM, or the free transport)
    prefill_->ready(id);
    return;
  }
  reader_->read(id);
}

void Dispatcher::pe_load_left(int pe) {
  if (scheduler_->queued()) mark_pe_group(pe_group_of_[pe]);
}

void Dispatcher::de_load_left(int de) {
  if (scheduler_->queued()) mark_de_group(de_group_of_[de]);
}

// The PE fetcher runs when its group is marked and the queue is not empty: notify when either becomes
// true with the other holding (a mark on an empty queue, then a first request, must wake it).
void Dispatcher::mark_pe_group(int group) {
  const bool was = pe_dirty_[group];
  pe_dirty_[group] = 1;
  if (!was || pe_queue_.size() == 1) pe_fetch_cv_[group]->notify_all();
}

void Dispatcher::mark_de_group(int group) {
  if (de_dirty_[group]) return;
  de_dirty_[group] = 1;
  de_fetch_cv_[group]->notify_all();
}

// Groups fetch on staggered ticks, as engine groups that fetch on their own clocks do: on a shared tick
// the groups would fetch in SimGrid's wake-up order, the same group first every time, and under a loose
// beta that group would take every new request (the others' engines starving).
void Dispatcher::wait_fetch_tick(int group, int groups) {
  const double period = c_.sc.policy.fetch_period_s;
  const double phase = period * group / groups;
  const double t = now();
  const double tick = std::ceil((t - phase) / period - 1e-9) * period + phase;
  if (tick > t) timed_sleep(c_, tick - t);
}

void Dispatcher::pe_fetcher(int g) {
  std::vector<policy::RequestInfo> head;
  while (true) {
    c_.run.lock_when(pe_fetch_cv_[g], [&]() { return !pe_dirty_[g] || pe_queue_.empty(); });
    if (c_.run.finished()) return;
    wait_fetch_tick(g, static_cast<int>(pe_groups_.size()));
    std::unique_lock<sg4::Mutex> lock(c_.run.mutex());
    pe_dirty_[g] = 0;
    head.clear();
    for (size_t i = 0; i < pe_queue_.size() && i < kFetchWindow; ++i) head.push_back(info(pe_queue_[i]));
    const std::vector<int> group =
        c_.members.dynamic() ? accepting(pe_groups_[g], platform::NodeRole::kPrefill) : pe_groups_[g];
    if (group.empty()) continue;  // no PE of the group takes requests now
    const policy::Assignments a = scheduler_->fetch_pe(head, group, c_.loads.view(now()));
    for (size_t k = 0; k < a.size(); ++k) {
      SIM_CHECK(a[k].first == static_cast<int>(k), "fetch_pe assigned queue index {} in place {}", a[k].first,
                k);
      const RequestId id = pe_queue_[k];
      c_.requests[id].pe = a[k].second;
      c_.requests[id].pe_placed = true;
      c_.loads.charge_pe(a[k].second, c_.requests[id]);
      de_queue_.push_back(id);
    }
    pe_queue_.erase(pe_queue_.begin(), pe_queue_.begin() + static_cast<long>(a.size()));
    // The whole window taken: the next window may go too.
    if (a.size() == head.size() && !pe_queue_.empty()) pe_dirty_[g] = 1;
    if (!a.empty())
      for (int d = 0; d < static_cast<int>(de_groups_.size()); ++d) mark_de_group(d);
  }
}

int Dispatcher::whole_de_for(int group) const {
  const auto& des = c_.loads.view().des;
  int best = -1;
  for (int d : de_groups_[group]) {
    if (c_.hbm.whole_claimed(d) || !c_.members.accepting(des[d].node, platform::NodeRole::kDecode)) continue;
    if (best < 0 || des[d].free_hbm > des[best].free_hbm ||
        (des[d].free_hbm == des[best].free_hbm && des[d].tok < des[best].tok))
      best = d;
  }
  return best;
}

void Dispatcher::de_fetcher(int g) {
  std::vector<policy::RequestInfo> queue;
  std::vector<RequestId> placed;
  while (true) {
    c_.run.lock_when(de_fetch_cv_[g], [&]() { return !de_dirty_[g]; });
    if (c_.run.finished()) return;
    // DE groups share the tick: phase 1 routes the whole global queue by tokens whichever group drains
    // it, and phase 2 serves only the group's private queue, so their order favours none.
    wait_fetch_tick(0, 1);
    std::unique_lock<sg4::Mutex> lock(c_.run.mutex());
    de_dirty_[g] = 0;
    // Phase 1: the global queue is drained into the groups' private queues.
    if (!de_queue_.empty()) {
      queue.clear();
      for (RequestId id : de_queue_) queue.push_back(info(id));
      std::vector<int> to;
      if (!c_.members.dynamic()) {
        to = scheduler_->route_de(queue, de_groups_, de_private_tok_, c_.loads.view(now()));
      } else {  // only the groups whose DEs take requests
        std::vector<std::vector<int>> groups;
        std::vector<double> tok;
        std::vector<int> which;
        for (int k = 0; k < static_cast<int>(de_groups_.size()); ++k) {
          std::vector<int> des = accepting(de_groups_[k], platform::NodeRole::kDecode);
          if (des.empty()) continue;
          groups.push_back(std::move(des));
          tok.push_back(de_private_tok_[k]);
          which.push_back(k);
        }
        SIM_CHECK(!groups.empty(), "no decode node takes requests");
        to = scheduler_->route_de(queue, groups, tok, c_.loads.view(now()));
        for (int& k : to) k = which[k];
      }
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
    const std::vector<int> group =
        c_.members.dynamic() ? accepting(de_groups_[g], platform::NodeRole::kDecode) : de_groups_[g];
    while (!mine.empty() && !group.empty()) {
      queue.clear();
      for (size_t i = 0; i < mine.size() && i < kFetchWindow; ++i) queue.push_back(info(mine[i]));
      policy::Assignments a = scheduler_->fetch_de(queue, group, c_.loads.view(now()));
      // Larger than a whole DE's HBM (the paper's requests all fit; a model whose weights leave little KV
      // room makes such turns common): the head claims a whole DE (HbmPool::promise), which takes nothing
      // else until the head has decoded alone. The rest of the queue goes on to the group's other DEs,
      // instead of every DE of the group waiting behind the head until one of them is idle.
      const bool whole =
          a.empty() && c_.hbm.need(c_.requests[mine.front()]) > c_.hbm.per_de(de_groups_[g].front());
      if (whole) {
        const int d = whole_de_for(g);
        if (d >= 0) a.emplace_back(0, d);
      }
      for (size_t k = 0; k < a.size(); ++k) {
        const RequestId id = mine[k];
        Request& r = c_.requests[id];
        r.de = a[k].second;
        r.de_placed = true;
        c_.loads.charge_de(r.de, r);
        c_.hbm.promise(r, r.de, whole, now());
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
