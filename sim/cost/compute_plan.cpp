#include "sim/cost/compute_plan.h"

#include <algorithm>

#include "sim/core/check.h"

namespace sim::cost {

namespace {

// The time the exchange's NVLink bytes take (0 when NVLink is not modelled).
double nvlink_s(const config::HardwareSpec& hw, double bytes) {
  return hw.nvlink_bw_Bps > 0 ? bytes / hw.nvlink_bw_Bps : 0;
}

}  // namespace

PassPlan prefill_pass(const config::ModelSpec& m, const config::HardwareSpec& hw,
                      const std::vector<std::vector<Chunk>>& per_gpu, const EpGroup& ep) {
  SIM_CHECK(!per_gpu.empty(), "a prefill pass without GPUs");
  const size_t n = per_gpu.size();
  PassPlan p;
  p.layers = m.layers;
  std::vector<double> own(n);  // attention + dense GEMMs: each GPU's part before the exchange
  double slowest = 0;
  for (size_t i = 0; i < n; ++i) {
    double tokens = 0;
    for (const auto& c : per_gpu[i]) tokens += c.bsz;
    p.tokens += tokens;
    p.attention_s.push_back(attention_time_s(m, hw, per_gpu[i]));
    own[i] = p.attention_s[i] + dense_time_s(m, hw, tokens, ep.gpus);
    slowest = std::max(slowest, own[i]);
  }
  if (p.tokens <= 0) {
    p.layer_work.assign(n, 0.0);
    return p;
  }
  const double avg = p.tokens / n;
  const double shared = expert_time_s(m, hw, avg, ep.gpus) + hw.prefill_layer_overhead_s;
  const Exchange x = prefill_exchange(m, avg, ep);
  const double nvlink = nvlink_s(hw, x.nvlink);
  p.layer_s = std::max(slowest + shared, nvlink);
  for (size_t i = 0; i < n; ++i) p.layer_work.push_back(std::max(own[i] + shared, nvlink) * hw.gpu_flops);
  p.exchange_bytes = x.cnic;
  return p;
}

double decode_own_s(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                    double total_context, const EpGroup& ep) {
  if (batch == 0) return 0;
  return decode_attention_s(m, hw, batch, total_context) + m.layers * dense_time_s(m, hw, batch, ep.gpus);
}

StepPlan decode_group_step(const config::ModelSpec& m, const config::HardwareSpec& hw, double slowest_own_s,
                           double group_batch, const EpGroup& ep) {
  StepPlan s;
  if (group_batch <= 0) return s;
  const double avg = group_batch / ep.gpus;
  const Exchange x = decode_exchange(m, avg, ep);
  s.step_s =
      std::max(slowest_own_s + m.layers * expert_time_s(m, hw, avg, ep.gpus) + hw.decode_step_overhead_s,
               nvlink_s(hw, m.layers * x.nvlink));
  s.work = s.step_s * hw.gpu_flops;
  s.exchange_bytes = m.layers * x.cnic;
  return s;
}

StepPlan decode_step(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                     double total_context, const EpGroup& ep) {
  return decode_group_step(m, hw, decode_own_s(m, hw, batch, total_context, ep),
                           static_cast<double>(batch) * ep.gpus, ep);
}

}  // namespace sim::cost
