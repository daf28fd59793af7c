// Dispatcher: places each request on a PE and a DE (the scheduler policy), chooses its read side and
// transport (the read-path policy), and starts its reads. An immediate scheduler (round_robin,
// least_tokens) places a request when it is submitted. A queued one (dualpath, DualPath §6.1) leaves it in
// the global PE queue until a PE group's fetch (Algorithm 1) gives it a PE, then in the global DE queue
// until a DE group's fetch routes it to a DE group (phase 1: least total tokens) and that group gives it
// a DE with HBM for it (phase 2). Engine groups: policy.pe_group_nodes prefill nodes per PE group, one
// decode node per DE group; groups fetch on the ticks of policy.fetch_period_s.
//
// A group fetches at the next tick only when that fetch could assign something: new requests arrived,
// or load left one of its engines (pe_load_left, de_load_left). A fetch that stops for want of an engine
// is not repeated until then. This gives the decisions of fetching on every tick at a cost of O(changes),
// not O(ticks x groups).
#pragma once

#include <deque>
#include <memory>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <vector>

#include "sim/engine/context.h"
#include "sim/policy/read_path.h"
#include "sim/policy/scheduler.h"

namespace sim::engine {

class PrefillService;
class ReaderService;

class Dispatcher {
 public:
  // The engines and their nodes are the LoadBook's.
  Dispatcher(EngineContext& ctx, std::unique_ptr<policy::SchedulerPolicy> scheduler,
             std::unique_ptr<policy::ReadPathPolicy> read_path);
  void connect(ReaderService* reader, PrefillService* prefill) {
    reader_ = reader;
    prefill_ = prefill;
  }
  // The actors start() spawns: the group fetchers of a queued scheduler.
  size_t actors() const;
  // Spawns the group fetchers of a queued scheduler (daemons on their groups' first node).
  void start();
  void wake_all();

  // A new request (issued now).
  void submit(RequestId id);
  // Load left an engine: its prefill ended (PE) or its turn ended (DE).
  void pe_load_left(int pe);
  void de_load_left(int de);
  // Role changes (control/role_changes.h): `node` has begun to drain (Membership says so already): what
  // waits for its DEs goes back to the global queue; a node switched and its engines take requests.
  void drain(int node);
  void joined();
  // A lost request (control/node_failures.h) leaves the queues it waits in.
  void forget(RequestId id);

 private:
  policy::RequestInfo info(RequestId id) const;
  const policy::ClusterView& accepting_view();
  // The engines of `engines` (of `role`) that take new requests now.
  std::vector<int> accepting(const std::vector<int>& engines, platform::NodeRole role) const;
  void place(RequestId id, int pe, int de);
  // Chooses the read side and transport, then queues the reads (or readies the request at once).
  void start_reads(RequestId id);
  void pe_fetcher(int group);
  void de_fetcher(int group);
  // Sleeps to the group's next fetch tick: group g of n fetches at (k + g / n) x policy.fetch_period_s.
  void wait_fetch_tick(int group, int groups);
  void mark_pe_group(int group);
  void mark_de_group(int group);
  // A whole-DE claim (a request larger than a DE's HBM): the group's unclaimed DE with the most free HBM
  // (ties: least tok, lowest id), or -1.
  int whole_de_for(int group) const;

  EngineContext& c_;
  std::unique_ptr<policy::SchedulerPolicy> scheduler_;
  std::unique_ptr<policy::ReadPathPolicy> read_path_;
  ReaderService* reader_ = nullptr;
  PrefillService* prefill_ = nullptr;
  std::vector<std::vector<int>> pe_groups_, de_groups_;  // engines per scheduling group
  std::vector<int> pe_group_of_, de_group_of_;           // per engine: its group
  std::vector<int> pe_group_node_, de_group_node_;       // per group: its first node (the fetcher's host)
  std::deque<RequestId> pe_queue_, de_queue_;
  std::vector<std::deque<RequestId>> de_private_;
  std::vector<double> de_private_tok_;
  std::vector<char> pe_dirty_, de_dirty_;
  std::vector<simgrid::s4u::ConditionVariablePtr> pe_fetch_cv_, de_fetch_cv_;
  policy::ClusterView accepting_;  // scratch of accepting_view()
};

}  // namespace sim::engine
