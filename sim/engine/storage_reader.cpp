// Read lanes: each node serves its storage read queue FIFO with sim.read_depth lanes, so at most that many
// reads per node are in flight (activities stay O(nodes)). A read starts only when the node's DRAM buffer
// has room for it (or holds nothing), which bounds reads in flight by cluster.dram_buffer_bytes.
// Buffers are taken in one order, PE side before DE side, so full buffers delay but never deadlock: a
// request holding DE buffer space never waits for PE buffer space (a split read's DE side queues once
// its PE side has started, request.h).
#include <algorithm>
#include <cmath>

#include "sim/engine/cluster.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

void Cluster::read_lane(int node) {
  NodeState& n = nodes_[node];
  const double capacity = sc_.cluster.dram_buffer_bytes;
  sg4::Host* storage = h_.nodes[node].storage;
  sg4::Host* dram = h_.nodes[node].dram;
  // Buffer bytes a read needs: its own bytes on the PE side; on the DE side the request's whole prompt
  // KV, reserved once (reserve_de_buffer's rule), or nothing when already reserved.
  auto need = [&](RequestId id, double bytes) {
    const Request& r = table_[id];
    if (node == pes_[r.pe].node) return bytes;
    return r.de_buf_bytes > 0 ? 0.0 : (r.hit + r.miss) * kv_token_;
  };
  while (true) {
    auto lock = lock_when(n.cv, [&]() {
      if (n.read_queue.empty()) return true;
      const double b = need(n.read_queue.front().first, n.read_queue.front().second);
      return n.buffer_used > 0 && b > 0 && n.buffer_used + b > capacity;
    });
    if (finished_) return;
    const auto [id, bytes] = n.read_queue.front();
    n.read_queue.pop_front();
    const double reserve = need(id, bytes);
    n.buffer_used += reserve;
    n.buffer_peak = std::max(n.buffer_peak, n.buffer_used);
    Request& q = table_[id];
    if (node == pes_[q.pe].node) {
      q.pe_buf_bytes += reserve;
      if (q.deferred_de_bytes > 0) {  // a split read: its DE side may now queue (request.h)
        NodeState& dn = nodes_[des_[q.de].node];
        dn.read_queue.emplace_back(id, q.deferred_de_bytes);
        q.deferred_de_bytes = 0;
        dn.cv->notify_all();
      }
    } else {
      q.de_buf_bytes += reserve;
    }
    n.reads_in_flight++;
    lock.unlock();
    const double t0 = engine::now();
    links_->send(storage, dram, bytes);
    n.reads_in_flight--;
    Request& r = table_[id];
    r.read_s = std::max(r.read_s, engine::now() - t0);
    on_read_done(id, node, bytes, bytes / kv_token_);
  }
}

}  // namespace sim::engine
