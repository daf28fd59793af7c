// Work plans for the engines: what one prefill forward pass of a DP-attention group, or one decode step,
// costs, as the FLOPs SimGrid executes on the GPU hosts and the EP exchange bytes the network carries
// (pure; no SimGrid). A GPU host runs at the node's gpu_flops; a plan's work is its time on an idle GPU
// times that speed. How the exchange overlaps the compute, and what the overlap costs, is the engine's
// (models/engine/README.md, "Overlap and fixed costs"). The exchange over the CNICs is a SimGrid flow beside
// the compute (engine/forward_pass.h, decode_service.h). Units: FLOPs, bytes, seconds, tokens.
#pragma once

#include <vector>

#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/cost/compute_model.h"

namespace sim::cost {

// Where a pass's or a step's GPU time goes, in GPU-seconds: each GPU's compute (its attention and dense
// GEMMs, then the routed experts of the group's busiest expert GPU, with the SMs the exchange holds), the
// exchange that its compute does not hide, the fixed costs (collective latency, per-layer overheads, the
// micro-batches' pipeline fill), the CPU time the GPUs wait for, and the time it waits for the group's
// slowest GPU (imbalance: the group runs each layer together). compute + exchange + fixed + cpu = the GPU's
// own time (its busy time); with imbalance, the plan's time.
struct TimeSplit {
  double compute_s = 0;
  double exchange_s = 0;
  double fixed_s = 0;
  double cpu_s = 0;
  double imbalance_s = 0;
  double total_s() const { return compute_s + exchange_s + fixed_s + cpu_s + imbalance_s; }
  TimeSplit& operator+=(const TimeSplit& o);
  TimeSplit scaled(double k) const;
};

// One layer (prefill) or one step (decode) whose compute takes `compute` on every SM, of which `overhead` is
// fixed costs, whose exchange has a fixed part of `latency` per micro-batch and `bytes_s` of bytes (both
// micro-batches), whose NVLink part takes `nvlink`; `fill`: one micro-batch's exchange of one MoE layer,
// which two micro-batches cannot hide (the pipeline's fill), paid once per call; `sm_share`: the share of
// the SMs the exchange's kernels hold while they overlap the compute, which then runs on the rest; `cpu`:
// the CPU time the GPUs wait for; `exchange_compute`: the part of `compute` that is the exchange's kernels
// holding every SM (decode), which the time split counts as exchange. How they combine is the engine's
// overlap (models/engine/README.md). A prefill under two micro-batches runs its two streams stage by stage
// (`staged`, micro_batch_schedule.h) instead: `routed` and `beside` are the parts of `compute` that are its
// routed and its shared experts, `dispatch` and `combine` the exchange's halves with their latency (both
// micro-batches, per layer), over `layers` layers; `latency`, `bytes_s` and `fill` are not used then.
struct OverlapTerms {
  config::EpOverlap mode = config::EpOverlap::kIdeal;
  double compute = 0, overhead = 0, latency = 0, bytes_s = 0, nvlink = 0, fill = 0, sm_share = 0, cpu = 0;
  double exchange_compute = 0;
  bool staged = false;
  double routed = 0, beside = 0, dispatch = 0, combine = 0;
  int layers = 1;

  double total() const;  // the layer's or the step's time
  // Its time split, `times` layers or steps of it, with `compute` in place of this->compute (a GPU of the
  // group whose compute is its own), waiting for `pace` (the group's time per layer or step) beyond its own.
  TimeSplit split(double compute_of_gpu, double pace, double times) const;
  // The same when that GPU's time, total() at its compute, is known already (`own_time`).
  TimeSplit split(double compute_of_gpu, double own_time, double pace, double times) const;
};

// One forward pass of a group of GPUs that run each layer together: DP attention and the dense GEMMs on
// each GPU's own tokens, then the barrier of the EP exchange, then the routed experts of the group's tokens
// on its GPUs, the busiest of them setting the pace (DualPath §6.2). For a group of one, the GPU's own layer
// time.
struct PassPlan {
  int layers = 1;
  std::vector<double> attention_s;  // per GPU: its attention time of one layer
  std::vector<double> own_s;        // per GPU: its part of one layer before the exchange (attention, dense
                                    // GEMMs, small kernels)
  std::vector<double> wait_s;       // per GPU: the whole pass's wait for the slowest GPU (split.imbalance_s)
  size_t slowest = 0;               // the GPU whose layer sets the pace
  std::vector<double> layer_work;   // per GPU: one layer's work (FLOPs at gpu_flops)
  double layer_s = 0;               // the pass's pace: the slowest GPU's layer
  double tokens = 0;                // new tokens over the group
  double exchange_bytes = 0;        // per GPU per layer over its CNIC, each direction
  TimeSplit split;                  // the whole pass (all layers), summed over the group's GPUs
};

// REQUIRES: per_gpu non-empty (one chunk list per GPU of the group; a list may be empty). `ep`: the
// prefill role's EP group (its GPUs shard the experts; its nodes set the exchange's remote share).
PassPlan prefill_pass(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                      const std::vector<std::vector<Chunk>>& per_gpu, const EpGroup& ep);

// A pass's waits for its slowest GPU (the sum of wait_s, split.imbalance_s) by what the slowest GPU holds
// more of: when its batch ends in a cut request (`slowest_cut`: a chunk that the compute quota or the largest
// pass cut, continued in a later pass), every wait is `chunk_s` (the slowest GPU is at its batch's limit;
// the others had less work than that); otherwise each GPU's wait goes to `attention_s` and `dense_s` in
// proportion to how much more attention and how much more of the rest of its own part (dense GEMMs, small
// kernels) the slowest GPU has than it (a long prompt held whole sets the pace by its attention).
struct WaitCauses {
  double attention_s = 0, dense_s = 0, chunk_s = 0;
  double total_s() const { return attention_s + dense_s + chunk_s; }
  WaitCauses& operator+=(const WaitCauses& o);
};
WaitCauses pass_wait_causes(const PassPlan& p, bool slowest_cut);

// One decode step of the decode role's EP group `ep`, whose GPUs step in lock-step (DeepSeek's decode
// runs every layer's dispatch and combine across the whole group): each GPU's attention and dense GEMMs
// on its own batch (decode_own_s), the group waiting for the slowest of them; then the routed experts of
// the group's tokens on its GPUs, the busiest expert GPU setting the pace; the exchange of the group's
// tokens (each GPU sends the group's average and the busiest receives its share). With MTP each request's
// query carries 1 + draft tokens through the model, and the draft module runs once per draft token. Over a
// group of one, a GPU's own step.
struct StepPlan {
  double step_s = 0;          // one step
  double work = 0;            // one step's work (FLOPs at gpu_flops)
  double exchange_bytes = 0;  // one step's EP exchange over each GPU's CNIC, each direction
  OverlapTerms terms;         // the step of the group's slowest GPU
  double shared_s = 0;        // its compute beyond a GPU's own part: the routed experts, the exchange's SMs
  // One step of a GPU of the group whose own part is `own_s` (decode_own_s), waiting for the slowest.
  TimeSplit gpu_split(double own_s) const { return terms.split(own_s + shared_s, step_s, 1); }
};
// A GPU's own part of a step: attention over its batch (max of FLOPs and KV reads) and its dense GEMMs,
// all layers, plus the draft module's; 0 for an empty batch.
double decode_own_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                    int batch, double total_context, const EpGroup& ep);
// The group's step when its slowest GPU's own part is `slowest_own_s` and its GPUs hold `group_batch`
// requests in all: slowest_own_s + the routed experts (and the exchange kernels' SM time) of the busiest
// expert GPU + the CPU time per step, overlapped with the exchange as the engine overlaps it; at least the
// NVLink time of the busiest expert GPU's exchange. Zero when group_batch == 0.
StepPlan decode_group_step(const config::ModelSpec& m, const config::HardwareSpec& hw,
                           const config::EngineSpec& e, double slowest_own_s, double group_batch,
                           const EpGroup& ep);
// A group whose every GPU holds `batch` requests over `total_context` tokens. Its `split`: one step, summed
// over the group's GPUs.
struct UniformStep : StepPlan {
  TimeSplit split;
};
UniformStep decode_step(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const config::EngineSpec& e, int batch, double total_context, const EpGroup& ep);

}  // namespace sim::cost
