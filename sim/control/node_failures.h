// NodeFailures: the scenario's node_down and node_up events (scenarios/README.md, "events"), played by one
// daemon on the control host.
//
// node_down at t: the node fails as a whole. Membership marks it down (it serves its role no more and takes
// no request); its links go down in SimGrid's own state (Transport::cut: SNIC, CNICs, DRAM, PCIe, its storage
// link, its pace link), so every transfer crossing them fails at once, the rest of the cluster's flows
// being shared anew by SimGrid. What the node held is lost, as a real node's DRAM and HBM are:
//   - a request is lost when its DE is on the node (anything short of its last token: its DE buffer, its
//     HBM, its decode state), or its PE is and its prefill has not ended (its reads, its PE buffer, its
//     prefill progress). Every lost request releases what it holds on every node (buffers, HBM, loads,
//     queued reads) and its turn runs again as a new request (Driver::restart), issued at once with the
//     turn's first issue time: its reads, prefill and decode start over on the nodes that are up;
//   - a prefill pass that the node was in (a lock-step group spanning it) fails on every GPU of the group:
//     its other requests go back to their PE queues and run in a later pass (PrefillService::undo_pass);
//   - a decode group that spans the node cuts its plan after the step in progress and goes on without it
//     (the EP group and the HBM left for KV follow the live GPUs, as after a role change);
//   - KV the node had not persisted yet, or was persisting, is lost (turns that ended keep their context
//     in storage, as dpsim's storage records it at the turn's end).
// The GPUs' executions are not failed (the hosts stay on, their actors being the services'): a pass or a
// plan on them is abandoned by its service. Failure detection is not modelled: the restart is immediate.
// node_up at t: the links come back, the node serves its role again, empty.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/engine/context.h"

namespace sim::metrics {
class Timeline;
}
namespace sim::engine {
class Dispatcher;
class ReaderService;
class PrefillService;
class DecodeService;
}  // namespace sim::engine
namespace sim::control {

class Driver;

class NodeFailures {
 public:
  NodeFailures(engine::EngineContext& c, engine::ReaderService& reader, engine::PrefillService& prefill,
               engine::DecodeService& decode, engine::Dispatcher& dispatcher, Driver& driver);
  // The daemon start() spawns (none without node events).
  size_t actors() const { return acts_.empty() ? 0 : 1; }
  void start();
  // `f` is called after each failure ("node_down") and recovery ("node_up"): the live bottleneck range.
  void on_change(std::function<void(const char* why)> f) { on_change_ = std::move(f); }
  // `f` is called after each failure and recovery too, for the live counts over time (summary.roles).
  void on_live_change(std::function<void()> f) { on_live_change_ = std::move(f); }
  // What scenario event i did ({} when it is not a node event): when it acted; for a node_down, the
  // requests it lost (by where they were) and restarted, the bytes they had read from storage and loaded
  // to a PE, the bytes their restarts read again and the KV it lost before persistence.
  nlohmann::json to_json(size_t event) const;
  // summary.failures: the totals over every node_down.
  nlohmann::json summary_json() const;
  // Each node's time down, as a span on the timeline's "events" track.
  void mark(metrics::Timeline& timeline, double end_s) const;

 private:
  struct Act {
    size_t event = 0;
    double at_s = 0;
    bool down = true;
    std::vector<int> nodes;
    double acted_at_s = -1;
    // node_down
    // Where its lost requests were: before their KV was ready (placed, reads queued or running), in
    // prefill (ready, no first token yet), in decode (from the first token on).
    int lost_reading = 0, lost_prefill = 0, lost_decode = 0;
    double bytes_read_lost = 0, bytes_loaded_lost = 0, persist_bytes_lost = 0;
    int lost() const { return lost_reading + lost_prefill + lost_decode; }
  };
  void play();
  void fail(Act& a);
  void recover(Act& a);
  // Releases everything lost request `id` holds and counts where it was.
  void let_go(engine::RequestId id, Act& a);
  // The links of `node`: accounted (indices into PlatformHandles::links) and its pace link.
  void node_links(int node, std::vector<int>& links, std::vector<simgrid::s4u::Link*>& others) const;

  engine::EngineContext& c_;
  engine::ReaderService& reader_;
  engine::PrefillService& prefill_;
  engine::DecodeService& decode_;
  engine::Dispatcher& dispatcher_;
  Driver& driver_;
  std::vector<Act> acts_;  // in the order they are played
  std::function<void(const char*)> on_change_;
  std::function<void()> on_live_change_;
};

}  // namespace sim::control
