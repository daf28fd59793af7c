#include "sim/cost/compute_plan.h"

#include <algorithm>

#include "sim/core/check.h"

namespace sim::cost {

PassPlan prefill_pass(const config::ModelSpec& m, const config::HardwareSpec& hw,
                      const std::vector<std::vector<Chunk>>& per_gpu) {
  SIM_CHECK(!per_gpu.empty(), "a prefill pass without GPUs");
  const size_t n = per_gpu.size();
  PassPlan p;
  p.layers = m.layers;
  double max_attention = 0;
  for (const auto& chunks : per_gpu) {
    p.attention_s.push_back(attention_time_s(m, hw, chunks));
    max_attention = std::max(max_attention, p.attention_s.back());
    for (const auto& c : chunks) p.tokens += c.bsz;
  }
  p.linear_s = p.tokens > 0 ? linear_time_s(m, hw, p.tokens / n) + m.prefill_layer_overhead_s : 0;
  p.layer_s = max_attention + p.linear_s;
  for (size_t i = 0; i < n; ++i) p.layer_work.push_back((p.attention_s[i] + p.linear_s) * hw.gpu_flops);
  return p;
}

StepPlan decode_step(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                     double total_context, int weight_shards) {
  StepPlan s;
  s.step_s = decode_step_time_s(m, hw, batch, total_context, weight_shards);
  s.work = s.step_s * hw.gpu_flops;
  return s;
}

}  // namespace sim::cost
