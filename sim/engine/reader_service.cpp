#include "sim/engine/reader_service.h"

#include <algorithm>

#include "sim/core/check.h"
#include "sim/engine/prefill_service.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

ReaderService::ReaderService(EngineContext& ctx) : c_(ctx), queues_(ctx.h.nodes.size()) {}

void ReaderService::start() {
  for (int n = 0; n < static_cast<int>(queues_.size()); ++n)
    for (int l = 0; l < c_.sc.sim.read_depth; ++l)
      engine::spawn("reader", c_.h.nodes[n].storage, [this, n]() { lane(n); });
}

void ReaderService::read(RequestId id) {
  Request& q = c_.requests[id];
  const int pe_node = c_.loads.pe_node(q.pe), de_node = c_.loads.de_node(q.de);
  // Each side's tokens from storage: its share of the hit, less what its node's DRAM tier holds.
  const std::pair<int, double> sides[2] = {{pe_node, storage_tokens(q, true)},
                                           {de_node, storage_tokens(q, false)}};
  const bool split = sides[0].second > 0 && sides[1].second > 0;
  // State first, notifications last: a notify is a simcall, and the lanes it wakes read this request.
  int queued[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    const auto [node, tokens] = sides[i];
    if (tokens <= 0) continue;
    q.reads_pending++;
    c_.loads.read_queued(node, tokens);  // both sides count as queued from now on (the policies' view)
    const double bytes = wire_bytes(q, tokens * c_.kv_token);
    if (split && node == de_node) {
      // Deadlock avoidance: a split request takes its PE buffer space before its DE reservation
      // (buffer_pool.h), as every other request does (PE-path reads reserve on the DE side at batch time).
      q.deferred_de_bytes = bytes;
      continue;
    }
    queues_[node].emplace_back(id, bytes);
    queued[i] = node;
  }
  for (int node : queued)
    if (node >= 0) c_.buffers.room(node)->notify_all();
}

void ReaderService::lane(int node) {
  auto& queue = queues_[node];
  while (true) {
    auto lock = c_.run.lock_when(c_.buffers.room(node), [&]() {
      if (queue.empty()) return true;
      const Request& r = c_.requests[queue.front().first];
      return !c_.buffers.fits(node,
                              c_.buffers.read_need(r, node == c_.loads.pe_node(r.pe), queue.front().second));
    });
    if (c_.run.finished()) return;
    const auto [id, bytes] = queue.front();
    queue.pop_front();
    Request& q = c_.requests[id];
    const bool pe_side = node == c_.loads.pe_node(q.pe);
    c_.buffers.take(q, node, pe_side, c_.buffers.read_need(q, pe_side, bytes));
    int deferred_node = -1;
    if (pe_side && q.deferred_de_bytes > 0) {  // a split read: its DE side may now queue
      deferred_node = c_.loads.de_node(q.de);
      queues_[deferred_node].emplace_back(id, q.deferred_de_bytes);
      q.deferred_de_bytes = 0;
    }
    c_.run.release(lock);
    if (deferred_node >= 0) c_.buffers.room(deferred_node)->notify_all();
    const double t0 = now();
    const Status st = c_.storage.read(node, bytes);
    SIM_CHECK(st.is_ok(), "storage read on node {}: {}", node, st.message());
    // The request is still in flight (its slot is not reused before its turn ends): its reference holds.
    q.read_s = std::max(q.read_s, now() - t0);
    q.t_read_start = q.t_read_start < 0 ? t0 : std::min(q.t_read_start, t0);
    q.t_read_end = std::max(q.t_read_end, now());
    c_.loads.read_queued(node, -bytes / c_.kv_token);
    c_.rec.hit_bytes_read += bytes;
    if (--q.reads_pending == 0) prefill_->ready(id);
  }
}

}  // namespace sim::engine
