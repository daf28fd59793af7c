// Work plans for the engines: what one prefill forward pass of a DP-attention group, or one decode step,
// costs, as the FLOPs SimGrid executes on the GPU hosts and the EP exchange bytes the network carries
// (pure; no SimGrid). A GPU host runs at the hardware's gpu_flops; a plan's work is its time on an idle GPU
// times that speed. The exchange over NVLink overlaps the compute (two micro-batches, as DeepSeek's
// inference system runs them) and holds the GPU's SMs: a plan's time is the larger of the two. The
// exchange over the CNICs is a SimGrid flow beside the compute (engine/forward_pass.h, decode_service.h).
// Units: FLOPs, bytes, seconds, tokens.
#pragma once

#include <vector>

#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/cost/compute_model.h"

namespace sim::cost {

// One forward pass of a group of GPUs that run each layer together: DP attention and the dense GEMMs on
// each GPU's own tokens, then the barrier of the EP exchange, then the routed experts of the group's tokens
// spread evenly (DualPath §6.2). For a group of one, the GPU's own layer time.
struct PassPlan {
  int layers = 1;
  std::vector<double> attention_s;  // per GPU: its attention time of one layer
  std::vector<double> layer_work;   // per GPU: one layer's work (FLOPs at gpu_flops)
  double layer_s = 0;               // the pass's pace: the slowest GPU's layer
  double tokens = 0;                // new tokens over the group
  double exchange_bytes = 0;        // per GPU per layer over its CNIC, each direction
};

// REQUIRES: per_gpu non-empty (one chunk list per GPU of the group; a list may be empty). `ep`: the
// prefill role's EP group (its GPUs shard the experts; its nodes set the exchange's remote share).
PassPlan prefill_pass(const config::ModelSpec& m, const config::HardwareSpec& hw,
                      const std::vector<std::vector<Chunk>>& per_gpu, const EpGroup& ep);

// One decode step of the decode role's EP group `ep`, whose GPUs step in lock-step (DeepSeek's decode
// runs every layer's dispatch and combine across the whole group): each GPU's attention and dense GEMMs
// on its own batch (decode_own_s), the group waiting for the slowest of them; then the routed experts of
// the group's tokens spread evenly over its GPUs; the exchange of the group's tokens, balanced over its
// GPUs (each sends and receives the group's average). Over a group of one, a GPU's own step.
struct StepPlan {
  double step_s = 0;          // one step
  double work = 0;            // one step's work (FLOPs at gpu_flops)
  double exchange_bytes = 0;  // one step's EP exchange over each GPU's CNIC, each direction
};
// A GPU's own part of a step: attention over its batch (max of FLOPs and KV reads) and its dense GEMMs,
// all layers. 0 for an empty batch.
double decode_own_s(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                    double total_context, const EpGroup& ep);
// The group's step when its slowest GPU's own part is `slowest_own_s` and its GPUs hold `group_batch`
// requests in all: slowest_own_s + layers x expert_time_s(group_batch / ep.gpus) + decode_step_overhead_s,
// at least the NVLink time of the average GPU's exchange. Zero when group_batch == 0.
StepPlan decode_group_step(const config::ModelSpec& m, const config::HardwareSpec& hw, double slowest_own_s,
                           double group_batch, const EpGroup& ep);
// A group whose every GPU holds `batch` requests over `total_context` tokens.
StepPlan decode_step(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                     double total_context, const EpGroup& ep);

}  // namespace sim::cost
