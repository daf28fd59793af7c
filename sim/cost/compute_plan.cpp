#include "sim/cost/compute_plan.h"

#include <algorithm>

#include "sim/core/check.h"

namespace sim::cost {

namespace {

// The time the exchange's NVLink bytes take (0 when NVLink is not modelled).
double nvlink_s(const config::HardwareSpec& hw, double bytes) {
  return hw.nvlink_bw_Bps > 0 ? bytes / hw.nvlink_bw_Bps : 0;
}

// How a layer's exchange overlaps its compute for a group `ep` (models/llm/README.md, "Fixed costs and
// overlap"). A group without an EP exchange (a dense model, a group of one GPU) has nothing to overlap.
config::EpOverlap overlap(const config::ModelSpec& m, const config::HardwareSpec& hw, const EpGroup& ep) {
  return m.moe() && ep.gpus > 1 ? hw.ep_overlap : config::EpOverlap::kIdeal;
}

// Micro-batches a layer's compute is split into.
int micro_batches(const config::ModelSpec& m, const config::HardwareSpec& hw, const EpGroup& ep) {
  return overlap(m, hw, ep) == config::EpOverlap::kTwoMicroBatches ? 2 : 1;
}

// The time of a layer (or a step) whose compute takes `compute`, whose exchange has a fixed part of
// `latency` per micro-batch and `bytes_s` of bytes at the CNIC's line rate (both micro-batches), whose NVLink
// part takes `nvlink`; `fill`: one micro-batch's exchange of one MoE layer, which two micro-batches cannot
// hide (the pipeline's fill), paid once per call.
double overlapped(config::EpOverlap mode, double compute, double latency, double bytes_s, double nvlink,
                  double fill) {
  switch (mode) {
    case config::EpOverlap::kNone:
      return compute + latency + bytes_s + nvlink;
    case config::EpOverlap::kTwoMicroBatches:
      return std::max({compute, nvlink, 2 * latency + bytes_s}) + fill;
    case config::EpOverlap::kIdeal:
      break;
  }
  return std::max({compute, nvlink, latency});
}

}  // namespace

PassPlan prefill_pass(const config::ModelSpec& m, const config::HardwareSpec& hw,
                      const std::vector<std::vector<Chunk>>& per_gpu, const EpGroup& ep) {
  SIM_CHECK(!per_gpu.empty(), "a prefill pass without GPUs");
  const size_t n = per_gpu.size();
  const int mb = micro_batches(m, hw, ep);
  PassPlan p;
  p.layers = m.layers;
  std::vector<double> own(n);  // attention + dense GEMMs: each GPU's part before the exchange
  double slowest = 0;
  for (size_t i = 0; i < n; ++i) {
    double tokens = 0;
    for (const auto& c : per_gpu[i]) tokens += c.bsz;
    p.tokens += tokens;
    p.attention_s.push_back(attention_time_s(m, hw, per_gpu[i]));
    own[i] = p.attention_s[i] + mb * dense_time_s(m, hw, tokens / mb, ep.gpus) / hw.k_prefill_efficiency;
    slowest = std::max(slowest, own[i]);
  }
  if (p.tokens <= 0) {
    p.layer_work.assign(n, 0.0);
    return p;
  }
  const double avg = p.tokens / n;
  const double shared =
      mb * (expert_time_s(m, hw, avg / mb, ep.gpus) / hw.k_prefill_efficiency + hw.prefill_layer_overhead_s);
  const Exchange x = prefill_exchange(m, avg, ep);
  // Per layer, averaged over the layers as the exchange's bytes are; the fill is one MoE layer's.
  const double moe_share = m.moe() ? static_cast<double>(m.moe_layers) / m.layers : 0;
  const double lat = m.moe() ? ep_latency_s(hw, Phase::kPrefill, ep.gpus) : 0;
  const double bytes_s = x.cnic / hw.cnic_bw_Bps;
  const double fill = moe_share > 0 ? (lat + bytes_s / moe_share / 2) / m.layers : 0;
  const double nvlink = nvlink_s(hw, x.nvlink);
  const config::EpOverlap mode = overlap(m, hw, ep);
  const auto layer = [&](double own_s) {
    return overlapped(mode, own_s + shared, lat * moe_share, bytes_s, nvlink, fill);
  };
  p.layer_s = layer(slowest);
  for (size_t i = 0; i < n; ++i) p.layer_work.push_back(layer(own[i]) * hw.gpu_flops);
  p.exchange_bytes = x.cnic;
  return p;
}

double decode_own_s(const config::ModelSpec& m, const config::HardwareSpec& hw, int batch,
                    double total_context, const EpGroup& ep) {
  if (batch == 0) return 0;
  const int mb = micro_batches(m, hw, ep);
  return decode_attention_s(m, hw, batch, total_context) +
         m.layers * mb *
             (dense_time_s(m, hw, static_cast<double>(batch) / mb, ep.gpus) + hw.decode_layer_overhead_s);
}

StepPlan decode_group_step(const config::ModelSpec& m, const config::HardwareSpec& hw, double slowest_own_s,
                           double group_batch, const EpGroup& ep) {
  StepPlan s;
  if (group_batch <= 0) return s;
  const int mb = micro_batches(m, hw, ep);
  const double avg = group_batch / ep.gpus;
  const Exchange x = decode_exchange(m, avg, ep);
  const double compute =
      slowest_own_s + m.layers * mb * expert_time_s(m, hw, avg / mb, ep.gpus) + hw.decode_step_overhead_s;
  // A step passes every MoE layer once per micro-batch; the fill is one MoE layer of one micro-batch.
  const double lat = m.moe() ? ep_latency_s(hw, Phase::kDecode, ep.gpus) : 0;
  const double bytes_s = m.layers * x.cnic / hw.cnic_bw_Bps;
  const double fill = m.moe() && m.moe_layers > 0 ? lat + bytes_s / m.moe_layers / 2 : 0;
  s.step_s = overlapped(overlap(m, hw, ep), compute, m.moe_layers * lat, bytes_s,
                        nvlink_s(hw, m.layers * x.nvlink), fill);
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
