// ReaderService: storage reads into the nodes' DRAM buffers. Each node serves its read queue FIFO with
// sim.read_depth lanes, so at most that many reads per node are in flight (activities stay O(nodes)). A
// read starts only when the node's buffer has room for it (BufferPool::fits), which bounds the bytes in
// flight by cluster.dram_buffer_bytes. Buffers are taken in one order, PE side before DE side: a split
// read's DE side is queued only once its PE side has started.
#pragma once

#include <deque>
#include <utility>
#include <vector>

#include "sim/engine/context.h"

namespace sim::engine {

class PrefillService;

class ReaderService {
 public:
  explicit ReaderService(EngineContext& ctx);
  void connect(PrefillService* prefill) { prefill_ = prefill; }
  // The actors start() spawns: sim.read_depth lanes per node.
  size_t actors() const { return queues_.size() * static_cast<size_t>(c_.sc.sim.read_depth); }
  // Spawns the read lanes.
  void start();

  // Queues the request's storage reads: its pe_fraction of the hit through its PE's node, the rest
  // through its DE's node, each less what its node's DRAM tier holds (storage_tokens()). REQUIRES: the
  // request has wire bytes to read; its PE and DE are set.
  void read(RequestId id);

 private:
  void lane(int node);

  EngineContext& c_;
  PrefillService* prefill_ = nullptr;
  std::vector<std::deque<std::pair<RequestId, double>>> queues_;  // per node: (request, bytes) waiting
};

}  // namespace sim::engine
