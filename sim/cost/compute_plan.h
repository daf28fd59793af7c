// Work plans for the engines: what one prefill forward pass of a DP-attention group, or one decode step,
// costs, as the FLOPs SimGrid executes on the GPU hosts (pure; no SimGrid). A GPU host runs at the
// hardware's gpu_flops; a plan's work is each part's FLOPs divided by its efficiency (peak_flops_factor x
// MFU), plus fixed overheads as their time at that speed, so a plan's time on an idle GPU is exactly
// compute_model.h's time. Units: FLOPs, seconds, tokens.
#pragma once

#include <vector>

#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/cost/compute_model.h"

namespace sim::cost {

// One forward pass of a group of GPUs that run each layer together (DP attention, then the MoE/linear work
// of the group's tokens spread evenly; DualPath §6.2). For a group of one, the GPU's own layer time.
struct PassPlan {
  int layers = 1;
  std::vector<double> attention_s;  // per GPU: its attention time of one layer
  std::vector<double> layer_work;  // per GPU: one layer's work (FLOPs at gpu_flops): attention + linear share
  double linear_s = 0;             // one layer's linear share per GPU, with the per-layer overhead
  double layer_s = 0;              // the pass's pace: the slowest GPU's attention + linear_s
  double tokens = 0;               // new tokens over the group
};

// REQUIRES: per_gpu non-empty (one chunk list per GPU of the group; a list may be empty).
PassPlan prefill_pass(const config::ModelSpec& m, const config::HardwareSpec& hw,
                      const std::vector<std::vector<Chunk>>& per_gpu);

// One decode step of a continuous batch on one GPU (compute_model.h's decode_step_time_s), reading the
// weights of a GPU of the decode role: `weight_shards` = weight_shards_for_role(decode GPUs).
struct StepPlan {
  double step_s = 0;  // one step
  double work = 0;    // one step's work (FLOPs at gpu_flops)
};
StepPlan decode_step(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                     double total_context, int weight_shards);

}  // namespace sim::cost
