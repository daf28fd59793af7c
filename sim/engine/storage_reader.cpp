// Read lanes: each node serves its storage read queue FIFO with sim.read_depth lanes, so at most that many
// reads per node are in flight (activities stay O(nodes)). A read starts only when the node's DRAM buffer
// has room for it (or holds nothing), which bounds reads in flight by cluster.dram_buffer_bytes.
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
  while (true) {
    auto lock = lock_when(n.cv, [&]() {
      return n.read_queue.empty() ||
             (n.buffer_used > 0 && n.buffer_used + n.read_queue.front().second > capacity);
    });
    if (finished_) return;
    const auto [id, bytes] = n.read_queue.front();
    n.read_queue.pop_front();
    n.buffer_used += bytes;
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
