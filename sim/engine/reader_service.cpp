#include "sim/engine/reader_service.h"

#include <algorithm>

#include "sim/core/check.h"
#include "sim/engine/de_buffer.h"
#include "sim/engine/prefill_service.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

ReaderService::ReaderService(EngineContext& ctx) : c_(ctx), queues_(ctx.h.nodes.size()) {
  for (const auto& [node, gpu] : c_.h.engines_of(platform::NodeRole::kDecode)) de_gpus_.push_back(gpu);
  // With the DE buffer in HBM a decode node keeps one FIFO per GPU: each DE's HBM is its own.
  for (size_t n = 0; n < queues_.size(); ++n)
    queues_[n].fifos.resize(de_buffer_hbm(c_) && c_.h.nodes[n].role == platform::NodeRole::kDecode
                                ? static_cast<size_t>(c_.h.gpus_on(static_cast<int>(n)))
                                : 1);
}

void ReaderService::start() {
  for (int n = 0; n < static_cast<int>(queues_.size()); ++n)
    for (int l = 0; l < c_.sc.sim.read_depth; ++l)
      engine::spawn("reader", c_.h.nodes[n].storage, [this, n]() { lane(n); });
}

void ReaderService::enqueue(int node, RequestId id, double bytes) {
  NodeQueue& nq = queues_[node];
  const Request& r = c_.requests[id];
  const size_t fifo = nq.fifos.size() > 1 ? static_cast<size_t>(de_gpus_[r.de]) : 0;
  nq.fifos[fifo].push_back({id, bytes, nq.next_seq++});
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
    enqueue(node, id, bytes);
    queued[i] = node;
  }
  for (int node : queued)
    if (node >= 0) c_.buffers.room(node)->notify_all();
}

void ReaderService::forget(RequestId id) {
  Request& q = c_.requests[id];
  for (size_t node = 0; node < queues_.size(); ++node)
    for (auto& fifo : queues_[node].fifos)
      for (auto it = fifo.begin(); it != fifo.end();) {
        if (it->id != id) {
          ++it;
          continue;
        }
        c_.loads.read_queued(static_cast<int>(node), -it->bytes / c_.kv_token);
        it = fifo.erase(it);
      }
  if (q.deferred_de_bytes > 0) {  // a split read's DE side, not queued yet
    c_.loads.read_queued(c_.loads.de_node(q.de), -q.deferred_de_bytes / c_.kv_token);
    q.deferred_de_bytes = 0;
  }
}

std::deque<ReaderService::Queued>* ReaderService::next_read(int node) {
  // The oldest head whose read may start: the space it lands in (the PE buffer, or the request's DE buffer:
  // de_buffer.h) is there or held already. With one FIFO only its head may go: a head that must wait holds
  // up the node's queue (the node's DRAM buffer is one space). With a FIFO per DE GPU a head that waits for
  // its DE's HBM holds up only the reads of that DE.
  std::deque<Queued>* best = nullptr;
  for (auto& fifo : queues_[node].fifos) {
    if (fifo.empty() || (best != nullptr && best->front().seq < fifo.front().seq)) continue;
    const Queued& head = fifo.front();
    const Request& r = c_.requests[head.id];
    const bool fits = node != c_.loads.pe_node(r.pe)
                          ? de_space_fits(c_, r)
                          : c_.buffers.fits(node, c_.buffers.read_need(r, true, head.bytes));
    if (fits) best = &fifo;
  }
  return best;
}

void ReaderService::lane(int node) {
  while (true) {
    std::deque<Queued>* fifo = nullptr;
    auto lock =
        c_.run.lock_when(c_.buffers.room(node), [&]() { return (fifo = next_read(node)) == nullptr; });
    if (c_.run.finished()) return;
    const Queued next = fifo->front();
    fifo->pop_front();
    const RequestId id = next.id;
    const double bytes = next.bytes;
    Request& q = c_.requests[id];
    const bool pe_side = node == c_.loads.pe_node(q.pe);
    if (pe_side) {
      c_.buffers.take(q, node, true, c_.buffers.read_need(q, true, bytes));
    } else {
      const bool taken = take_de_space(c_, q);
      SIM_CHECK(taken, "request {}: its DE-side space fitted, then did not", id);
    }
    int deferred_node = -1;
    if (pe_side && q.deferred_de_bytes > 0) {  // a split read: its DE side may now queue
      deferred_node = c_.loads.de_node(q.de);
      enqueue(deferred_node, id, q.deferred_de_bytes);
      q.deferred_de_bytes = 0;
    }
    control::RunControl::release(lock);
    if (deferred_node >= 0) c_.buffers.room(deferred_node)->notify_all();
    const double t0 = now();
    // DE side with the DE buffer in HBM: into the DE GPU's HBM, through the node's DRAM.
    double sent = bytes;
    const Status st = pe_side || !de_buffer_hbm(c_) ? c_.storage.read(node, bytes, &sent)
                                                    : c_.storage.read_to_gpu(node, de_gpus_[q.de], bytes);
    // The run stopped and its drain abandoned the read: the lane ends with the run.
    if (!st.is_ok() && c_.transport.abandoned()) return;
    // The request is still in flight (its slot is not reused before its turn ends, nor ever once it is
    // lost): its reference holds.
    SIM_CHECK(st.is_ok() || q.lost, "storage read on node {}: {}", node, st.message());
    c_.loads.read_queued(node, -bytes / c_.kv_token);
    if (q.lost) {  // its node failed while it read (this read may have failed with it): nothing goes on
      c_.rec.lost_bytes_read += sent;
      continue;
    }
    q.read_s = std::max(q.read_s, now() - t0);
    q.t_read_start = q.t_read_start < 0 ? t0 : std::min(q.t_read_start, t0);
    q.t_read_end = std::max(q.t_read_end, now());
    q.read_bytes += bytes;
    c_.rec.hit_bytes_read += bytes;
    if (q.restart_event >= 0) c_.rec.bytes_reread[q.restart_event] += bytes;
    if (--q.reads_pending == 0) prefill_->ready(id);
  }
}

}  // namespace sim::engine
