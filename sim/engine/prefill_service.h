// PrefillService: the prefill engines (one per GPU of the prefill nodes) and their forward passes. An EP
// model's PE GPUs are split into deployment units (config/units.h): each unit is one EP group, whose live
// GPUs share the experts (the weights per GPU, the HBM left for KV, each GPU's routed work). One actor per
// DP-attention group: an EP model's PE GPUs run each layer together, because DP attention is followed by the
// EP MoE exchange (DualPath §6.2): by default the whole unit, or cluster.prefill_dp_group_gpus of its GPUs;
// other models run each GPU on its own. Each GPU of an EP group that spans nodes sends its share of the
// exchange through its CNIC as a collective flow (transport.h).
//
// A pass: every GPU of the group forms its batch FIFO from its requests whose KV is in a buffer, under
// the compute quota (§6.2) with the last request chunked by binary search (cost/batch_quota.h); the
// pass's compute is a plan (cost/compute_plan.h) executed on the GPU hosts. Layerwise prefill (§4): the
// KV load of layer l+1 overlaps the compute of layer l, and layer l's KV is pushed to the DE buffers right
// after its compute (forward_pass.h: how finely that is simulated). Basic (no layerwise): a batch's KV must
// fit in HBM and is loaded before any compute. Transfers are aggregated per (source, destination) host,
// so comms in flight stay O(DEs) per GPU.
#pragma once

#include <deque>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <vector>

#include "sim/cost/batch_quota.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/context.h"
#include "sim/engine/forward_pass.h"

namespace sim::engine {

class DecodeService;
class Dispatcher;

struct PrefillEngineState {
  int id = 0, node = 0, gpu = 0;
  int pass_group = 0;           // the DP-attention group whose forward passes it runs in (shares its cv)
  int unit = 0;                 // its deployment unit (EP group)
  std::deque<RequestId> ready;  // KV in a buffer: may join a forward batch
  double busy_s = 0;            // compute time (SimGrid executions)
  double pass_s = 0;            // time in its group's passes: held by the lock-step pass, busy or waiting
  simgrid::s4u::ConditionVariablePtr cv;  // the pass group's
};

class PrefillService {
 public:
  // One PE per GPU of the prefill nodes, numbered node-major in platform order.
  explicit PrefillService(EngineContext& ctx);
  void connect(DecodeService* decode, Dispatcher* dispatcher, TurnEvents* turns) {
    decode_ = decode;
    dispatcher_ = dispatcher;
    turns_ = turns;
  }
  void start();
  // Wakes every pass actor (at the end of the run).
  void wake_all();

  // The request's KV is in its buffers (or it has nothing to read): it may join its PE's batches.
  void ready(RequestId id);
  // The prefill role's nodes changed (a role change, a failure): each unit's EP group (its live GPUs) and
  // the HBM left for KV follow them.
  void resize();
  // The units (EP groups) and each PE's.
  int units() const { return static_cast<int>(unit_ep_.size()); }
  // Whether the PEs on `node` hold no request and its GPUs are in no pass (a draining node:
  // control/role_changes.h).
  bool idle(int node) const;
  // A lost request (control/node_failures.h) leaves its PE's queue; a pass it is in drops it at its end.
  void forget(RequestId id);

  const std::vector<PrefillEngineState>& engines() const { return pes_; }
  // The actors start() spawns: one per DP-attention group.
  size_t actors() const { return pass_groups_.size(); }

 private:
  struct PassItem {
    RequestId id;
    cost::Chunk chunk;
    bool hit_pushed = false;  // the request's hit_pushed before the pass (a failed pass restores it)
  };
  // How a GPU's batch was formed: what closed it, whether it ends in a cut request (a chunk continued in a
  // later pass), and the quota's measure of it (cost/batch_quota.h).
  struct BatchForm {
    cost::BatchBound bound = cost::BatchBound::kNone;
    bool cut = false;
    double predicted_s = 0;
  };
  // A node of the pass failed during it: its requests that are not lost go back to the head of their PE's
  // queue, as they were before the pass.
  void undo_pass(std::vector<std::vector<PassItem>>& batches, const std::vector<int>& members);
  void pass_loop(int group);
  bool has_work(const PrefillEngineState& pe) const;
  // Whether the PEs on `node` hold no request (placed, reading or ready).
  bool holds_nothing(int node) const;
  BatchForm form_batch(PrefillEngineState& pe, std::vector<PassItem>& batch,
                       std::vector<cost::Chunk>& chunks);
  // A pass's figures for the results: summary.prefill_passes and the waits' causes in the time split.
  void record_pass(const cost::PassPlan& plan, const std::vector<BatchForm>& forms, double wall_s);
  // The transfers of one GPU's batch: KV loads to the GPU and pushes to the DE buffers, per layer.
  void plan_transfers(const PrefillEngineState& pe, const std::vector<PassItem>& batch, Flows& load,
                      Flows& push);
  void prefill_done(RequestId id);

  EngineContext& c_;
  DecodeService* decode_ = nullptr;
  Dispatcher* dispatcher_ = nullptr;
  TurnEvents* turns_ = nullptr;
  std::vector<cost::EpGroup> unit_ep_;          // per unit: its EP group (its live GPUs)
  std::vector<cost::BatchLimits> unit_limits_;  // per unit: a GPU's batch: the compute quota, its HBM for KV
  std::vector<PrefillEngineState> pes_;
  std::vector<std::vector<int>> pass_groups_;  // PEs per DP-attention group
  std::vector<int> in_pass_;                   // per node: passes in progress that its GPUs are in
  PassPipeline pipeline_;
};

}  // namespace sim::engine
