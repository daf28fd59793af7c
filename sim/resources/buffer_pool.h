// BufferPool: the DRAM buffer of every node (cluster.dram_buffer_bytes each): what storage reads land in
// and what KV waits in for its PE (PE buffer) or its DE (DE buffer). Holds the two rules that keep full
// buffers from deadlocking:
//   - fits: bytes fit on a node when none are needed, no request holds any of the buffer (a request
//     larger than a buffer then runs alone), or there is room;
//   - one order: a request takes its PE-side space before its DE-side space, and its DE-side space is its
//     whole prompt KV, reserved once before its first byte lands there (by its first DE-side read, or by
//     its PE when it takes a PE-path request into a batch). Whatever holds DE space can then finish
//     without more of it, so a full buffer delays but never deadlocks.
// Waits: read lanes wait on a node's condition variable (room()); a PE whose batch waits for DE space
// registers with wait_for_room() and is woken through the waker set by its service. With the DE buffer in
// HBM (cluster.de_buffer = hbm) only the PE side is here; the same waits serve the DE side's HBM
// (engine/de_buffer.h).
#pragma once

#include <functional>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <vector>

#include "sim/engine/request.h"

namespace sim::resources {

class BufferPool {
 public:
  // REQUIRES: capacity_bytes > 0, kv_bytes_per_token > 0.
  BufferPool(int nodes, double capacity_bytes, double kv_bytes_per_token);

  bool fits(int node, double bytes) const;
  // Buffer bytes a storage read of `bytes` needs on `node`: its own bytes on the PE side; on the DE side
  // the request's whole prompt KV once (nothing when already reserved).
  double read_need(const engine::Request& r, bool pe_side, double bytes) const;
  // Takes `bytes` on a node for `r` (PE side or DE side). REQUIRES: fits(node, bytes).
  void take(engine::Request& r, int node, bool pe_side, double bytes);
  // The DE side: whether the request's whole prompt KV fits, and reserving it (false: nothing reserved).
  bool de_fits(const engine::Request& r, int de_node) const;
  bool reserve_de(engine::Request& r, int de_node);
  // Returns what `r` holds on one side to its node, then wakes that node's read lanes and waiting PEs.
  void release(engine::Request& r, int node, bool pe_side);
  // Wakes the node's read lanes and waiting PEs: space they wait for was freed (its DRAM buffer, or, with
  // the DE buffer in HBM, a DE GPU's HBM: engine/de_buffer.h).
  void notify_room(int node);

  // A PE waits for room on `node` (woken once, at the next release there).
  void wait_for_room(int node, int pe);
  void set_pe_waker(std::function<void(int pe)> wake) { wake_pe_ = std::move(wake); }
  const simgrid::s4u::ConditionVariablePtr& room(int node) const { return nodes_[node].cv; }

  double capacity() const { return capacity_; }
  double used(int node) const { return nodes_[node].used; }
  double peak(int node) const { return nodes_[node].peak; }
  // The bytes the node's buffer held, integrated over simulated time up to `t` (byte-seconds): its mean
  // occupancy over [0, t] is this / t. REQUIRES: t >= the time of the last change.
  double byte_s(int node, double t) const;
  // Bytes held over all nodes: 0 after a complete run; anything else is a leak.
  double held() const;
  void wake_all();

 private:
  struct Node {
    double used = 0, peak = 0;
    double byte_s = 0, since = 0;  // the occupancy integral up to `since`, the time of the last change
    int holders = 0;               // request sides holding bytes here
    std::vector<int> waiting_pes;
    simgrid::s4u::ConditionVariablePtr cv;
  };
  void add(int node, double bytes);
  // Brings the node's occupancy integral up to now, before `used` changes.
  void integrate(int node);
  double capacity_;
  double kv_token_;
  std::vector<Node> nodes_;
  std::function<void(int)> wake_pe_;
};

}  // namespace sim::resources
