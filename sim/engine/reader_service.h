// ReaderService: storage reads into the nodes' DRAM buffers (or, on the DE side with cluster.de_buffer =
// hbm, into the DE GPU's HBM through the node's DRAM). Each node serves its read queue FIFO with
// sim.read_depth lanes, so at most that many reads per node are in flight (activities stay O(nodes)). A
// read starts only when the space it lands in is there: room in the node's buffer (BufferPool::fits),
// which bounds the bytes in flight by cluster.dram_buffer_bytes, or the request's DE-side space
// (de_buffer.h). A node serves its reads FIFO: a read that must wait holds up those behind it; with the
// DE buffer in HBM a decode node keeps a FIFO per GPU, so that a read waiting for its DE's HBM holds up
// only that DE's reads. Buffers are taken in one order, PE side before DE side: a split read's DE side is
// queued only once its PE side has started.
#pragma once

#include <cstdint>
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
  // A lost request (control/node_failures.h): its reads still queued are dropped (a read in progress
  // finishes or fails, and then lets the request go).
  void forget(RequestId id);

 private:
  struct Queued {
    RequestId id;
    double bytes;
    uint64_t seq;  // order of arrival on its node
  };
  // A node's reads waiting: one FIFO, or, on a decode node with the DE buffer in HBM, one per GPU.
  struct NodeQueue {
    std::vector<std::deque<Queued>> fifos;
    uint64_t next_seq = 0;
  };
  void enqueue(int node, RequestId id, double bytes);
  // The FIFO whose head is the node's next read to start, or nullptr when none may start now.
  std::deque<Queued>* next_read(int node);
  void lane(int node);

  EngineContext& c_;
  PrefillService* prefill_ = nullptr;
  std::vector<NodeQueue> queues_;  // per node
  std::vector<int> de_gpus_;       // per DE: its GPU on its node
};

}  // namespace sim::engine
