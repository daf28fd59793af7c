// DecodeService: the decode engines (one per GPU of the decode nodes), three actors each:
// - loader: takes requests whose prompt KV is complete in the DE buffer (FIFO), gets their HBM (HbmPool;
//   waits while it is full), copies the KV H2D through the GPU's CNIC, frees the buffer, and hands the
//   request to the batch;
// - decode: a continuous batch. One plan = the steps until the earliest request finishes, at a constant
//   step time (cost/compute_plan.h), executed on the GPU host; a join wakes the engine, which cuts the
//   plan, finishes the step in progress and re-plans. So the batch costs O(changes) events, not O(tokens);
// - persist: every full block of generated KV (policy.persist_block_tokens) goes D2H then to storage; the
//   appended tokens' KV goes from the DE buffer to storage. Pending bytes are sent in aggregate, at most
//   once per sim.persist_interval_s (what becomes pending during an interval waits for its end).
#pragma once

#include <deque>
#include <optional>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <vector>

#include "sim/cost/compute_model.h"
#include "sim/engine/context.h"

namespace sim::engine {

class Dispatcher;

struct DecodeEngineState {
  int id = 0, node = 0, gpu = 0;
  std::deque<RequestId> waiting;  // prompt KV complete in the DE buffer: waiting for HBM + H2D
  std::vector<RequestId> joins;   // in HBM: join the batch at the next step
  std::vector<RequestId> batch;
  double busy_s = 0;              // decode time (SimGrid executions)
  double persist_gpu_bytes = 0;   // generated KV waiting for D2H + persist
  double persist_dram_bytes = 0;  // appended KV in the DE buffer waiting for persist
  int max_batch = 0;
  simgrid::s4u::ConditionVariablePtr cv_loader, cv_decode, cv_persist;
};

class DecodeService {
 public:
  // One DE per GPU of the decode nodes, numbered node-major in platform order.
  explicit DecodeService(EngineContext& ctx);
  void connect(Dispatcher* dispatcher, TurnEvents* turns) {
    dispatcher_ = dispatcher;
    turns_ = turns;
  }
  void start();
  void wake_all();

  // The request's prefill is done and its whole prompt KV is in its DE buffer.
  void prompt_ready(RequestId id);

  const std::vector<DecodeEngineState>& engines() const { return des_; }
  const DecodeEngineState& engine(int de) const { return des_[de]; }

 private:
  void loader(int de);
  void decode_loop(int de);
  void persist_loop(int de);
  void queue_persist(DecodeEngineState& de, double gpu_bytes, double dram_bytes);
  // The request generated its last token at t_done.
  void turn_end(RequestId id, double t_done);

  EngineContext& c_;
  Dispatcher* dispatcher_ = nullptr;
  TurnEvents* turns_ = nullptr;
  // Waits for an exchange flow, if there is one.
  void wait_exchange(std::optional<transport::Transport::Handle> x, int de);
  cost::EpGroup ep_;  // the decode role's EP group
  std::vector<DecodeEngineState> des_;
};

}  // namespace sim::engine
