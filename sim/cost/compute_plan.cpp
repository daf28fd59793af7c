#include "sim/cost/compute_plan.h"

#include <algorithm>

#include "sim/core/check.h"
#include "sim/cost/micro_batch_schedule.h"

namespace sim::cost {

TimeSplit& TimeSplit::operator+=(const TimeSplit& o) {
  compute_s += o.compute_s;
  exchange_s += o.exchange_s;
  fixed_s += o.fixed_s;
  cpu_s += o.cpu_s;
  imbalance_s += o.imbalance_s;
  return *this;
}

TimeSplit TimeSplit::scaled(double k) const {
  return {compute_s * k, exchange_s * k, fixed_s * k, cpu_s * k, imbalance_s * k};
}

double OverlapTerms::total() const {
  double t = 0;
  switch (mode) {
    case config::EpOverlap::kNone:
      t = compute + latency + bytes_s + nvlink;
      break;
    case config::EpOverlap::kTwoMicroBatches:
      if (staged) {
        // Each micro-batch's stages: its half of every part, the compute's on the SMs the exchange leaves.
        const double on_sms = 2 * (1 - sm_share);
        MicroBatchStages s;
        s.attention = std::max(0.0, compute - routed - beside) / on_sms;
        s.shared = beside / on_sms;
        s.experts = routed / on_sms;
        s.dispatch = dispatch / 2;
        s.combine = combine / 2;
        t = std::max(nvlink, two_stream_pass_s(s, layers) / layers);
      } else {
        t = std::max({compute / (1 - sm_share), nvlink, 2 * latency + bytes_s}) + fill;
      }
      break;
    case config::EpOverlap::kIdeal:
      t = std::max({compute, nvlink, latency});
      break;
  }
  return t + cpu;
}

// The compute but its fixed part, on the SMs the exchange's kernels leave it (two micro-batches: the compute
// stream runs that long, as a profile shows it); the fixed costs (with no overlap the latency too; with two
// micro-batches the fill); the CPU; what the exchange adds beyond them (the compute stream's waits for it);
// then the wait for the group's pace.
TimeSplit OverlapTerms::split(double compute_of_gpu, double pace, double times) const {
  OverlapTerms own = *this;
  own.compute = compute_of_gpu;
  return split(compute_of_gpu, own.total(), pace, times);
}

TimeSplit OverlapTerms::split(double compute_of_gpu, double own_time, double pace, double times) const {
  const double t = own_time;
  const bool two = mode == config::EpOverlap::kTwoMicroBatches;
  const double on_sms = two ? 1 / (1 - sm_share) : 1.0;
  TimeSplit s;
  s.compute_s = (compute_of_gpu - overhead - exchange_compute) * on_sms * times;
  s.fixed_s = (overhead * on_sms + (mode == config::EpOverlap::kNone ? latency
                                    : two && !staged                 ? fill
                                                                     : 0.0)) *
              times;
  s.cpu_s = cpu * times;
  s.exchange_s = std::max(0.0, t * times - s.compute_s - s.fixed_s - s.cpu_s);
  s.imbalance_s = std::max(0.0, pace - t) * times;
  return s;
}

namespace {

// The time the exchange's NVLink bytes take (0 when NVLink is not modelled).
double nvlink_s(const config::HardwareSpec& hw, double bytes) {
  return hw.nvlink_bw_Bps > 0 ? bytes / hw.nvlink_bw_Bps : 0;
}

// How a layer's exchange overlaps its compute for a group `ep` (models/engine/README.md, "Overlap and fixed
// costs"). A group without an EP exchange (a dense model, a group of one GPU) has nothing to overlap.
config::EpOverlap overlap(const config::ModelSpec& m, const config::EngineSpec& e, const EpGroup& ep) {
  return m.moe() && ep.gpus > 1 ? e.ep_overlap : config::EpOverlap::kIdeal;
}

// Micro-batches a layer's compute is split into.
int micro_batches(const config::ModelSpec& m, const config::EngineSpec& e, const EpGroup& ep) {
  return overlap(m, e, ep) == config::EpOverlap::kTwoMicroBatches ? 2 : 1;
}

}  // namespace

PassPlan prefill_pass(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                      const std::vector<std::vector<Chunk>>& per_gpu, const EpGroup& ep) {
  SIM_CHECK(!per_gpu.empty(), "a prefill pass without GPUs");
  const size_t n = per_gpu.size();
  const int mb = micro_batches(m, e, ep);
  PassPlan p;
  p.layers = m.layers;
  std::vector<double> own(n);  // attention + dense GEMMs: each GPU's part before the exchange
  double slowest = 0;
  for (size_t i = 0; i < n; ++i) {
    double tokens = 0;
    for (const auto& c : per_gpu[i]) tokens += c.bsz;
    p.tokens += tokens;
    p.attention_s.push_back(attention_time_s(m, hw, e, per_gpu[i]));
    own[i] = p.attention_s[i] + mb * dense_time_s(m, hw, e, tokens / mb, ep.gpus) / e.k_prefill_efficiency +
             token_kernels_s(e, Phase::kPrefill, tokens);
    slowest = std::max(slowest, own[i]);
  }
  if (p.tokens <= 0) {
    p.layer_work.assign(n, 0.0);
    p.own_s = own;
    p.wait_s.assign(n, 0.0);
    return p;
  }
  if (!m.moe() && n > 1) {
    // A dense model whose group shards its weights (tensor parallel): every GPU computes its share of every
    // chunk of the group, 1 / n of the attention and of the GEMMs' FLOPs, and reads its weight shard once.
    std::vector<Chunk> all;
    for (const auto& chunks : per_gpu) all.insert(all.end(), chunks.begin(), chunks.end());
    const double attention = attention_time_s(m, hw, e, all) / n;
    const double tp = attention +
                      mb * dense_time_s(m, hw, e, p.tokens / n / mb, ep.gpus) / e.k_prefill_efficiency +
                      token_kernels_s(e, Phase::kPrefill, p.tokens / n);
    p.attention_s.assign(n, attention);
    own.assign(n, tp);
    slowest = tp;
  }
  // The routed experts: the busiest expert GPU of the group takes its imbalance times the average pairs,
  // and receives (dispatch) and sends back (combine) as much more of the exchange.
  const double avg = p.tokens / n;
  const double imbalance = m.moe() ? config::expert_imbalance(e, ep.gpus) : 1;
  const double overhead = mb * e.prefill_layer_overhead_s;
  const double routed =
      mb * expert_time_s(m, hw, e, Phase::kPrefill, imbalance * avg / mb, ep.gpus) / e.k_prefill_efficiency;
  const double shared = routed + overhead;
  const Exchange x = prefill_exchange(m, avg, ep);
  // Per layer, averaged over the layers as the exchange's bytes are; the fill is one MoE layer's.
  const double moe_share = m.moe() ? static_cast<double>(m.moe_layers) / m.layers : 0;
  const double lat = m.moe() ? ep_latency_s(e, Phase::kPrefill, ep.gpus) : 0;
  const double bytes_s = imbalance * prefill_exchange_s(hw, e, x, ep);
  const double cpu = e.prefill_cpu_s / m.layers;
  OverlapTerms o;
  o.mode = overlap(m, e, ep);
  o.overhead = overhead;
  o.latency = lat * moe_share;
  o.bytes_s = bytes_s;
  o.nvlink = imbalance * nvlink_s(hw, x.nvlink);
  o.fill = moe_share > 0 ? (lat + bytes_s / moe_share / 2) / m.layers : 0;
  o.sm_share = o.mode == config::EpOverlap::kTwoMicroBatches && hw.gpu_sms > 0
                   ? std::min(0.95, e.prefill_comm_sms / hw.gpu_sms)
                   : 0;
  o.cpu = cpu;
  if (o.mode == config::EpOverlap::kTwoMicroBatches) {
    // The two streams stage by stage: the routed experts after the dispatch, the shared experts beside the
    // other micro-batch's exchange, each micro-batch paying the latency of its dispatch and its combine.
    const ExchangeParts bytes = prefill_exchange_parts(hw, e, x, ep);
    const ExchangeParts fixed = ep_latency_parts(e, Phase::kPrefill, ep.gpus);
    o.staged = true;
    o.layers = m.layers;
    o.routed = routed;
    o.beside =
        mb * dense_time_s(m, hw, e, avg / mb, ep.gpus) / e.k_prefill_efficiency * shared_expert_share(m);
    o.dispatch = mb * fixed.dispatch * moe_share + imbalance * bytes.dispatch;
    o.combine = mb * fixed.combine * moe_share + imbalance * bytes.combine;
  }
  const auto layer = [&](double own_s) {
    o.compute = own_s + shared;
    return o.total();
  };
  p.layer_s = layer(slowest);
  p.own_s = own;
  p.slowest = static_cast<size_t>(std::max_element(own.begin(), own.end()) - own.begin());
  for (size_t i = 0; i < n; ++i) {
    // One schedule per GPU (a prefill's two streams are simulated layer by layer): its time serves both.
    const double own_time = layer(own[i]);
    p.layer_work.push_back(own_time * hw.gpu_flops);
    const TimeSplit gpu = o.split(own[i] + shared, own_time, p.layer_s, m.layers);
    p.wait_s.push_back(gpu.imbalance_s);
    p.split += gpu;
  }
  p.exchange_bytes = x.cnic;
  return p;
}

WaitCauses& WaitCauses::operator+=(const WaitCauses& o) {
  attention_s += o.attention_s;
  dense_s += o.dense_s;
  chunk_s += o.chunk_s;
  return *this;
}

WaitCauses pass_wait_causes(const PassPlan& p, bool slowest_cut) {
  WaitCauses w;
  const size_t k = p.slowest;
  for (size_t i = 0; i < p.wait_s.size(); ++i) {
    const double wait = p.wait_s[i];
    if (wait <= 0) continue;
    if (slowest_cut) {
      w.chunk_s += wait;
      continue;
    }
    const double more_attention = std::max(0.0, p.attention_s[k] - p.attention_s[i]);
    const double more_dense =
        std::max(0.0, (p.own_s[k] - p.attention_s[k]) - (p.own_s[i] - p.attention_s[i]));
    const double more = more_attention + more_dense;
    // A wait with no larger part behind it (a schedule's rounding) counts as attention's.
    const double a = more > 0 ? more_attention / more : 1.0;
    w.attention_s += wait * a;
    w.dense_s += wait * (1 - a);
  }
  return w;
}

namespace {

// A GPU's attention and dense GEMMs over `layers` of the model's layers, for `batch` requests whose queries
// carry `queries` tokens each (the dense GEMMs per micro-batch).
double own_layers(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                  int batch, double total_context, const EpGroup& ep, int queries, double layers) {
  if (layers <= 0) return 0;
  const int mb = micro_batches(m, e, ep);
  const double tokens = static_cast<double>(batch) * queries;
  return layers / m.layers * decode_attention_s(m, hw, e, batch, total_context, queries) +
         layers * (mb * (dense_time_s(m, hw, e, tokens / mb, ep.gpus) + e.decode_layer_overhead_s) +
                   token_kernels_s(e, Phase::kDecode, tokens));
}

}  // namespace

double decode_own_s(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                    int batch, double total_context, const EpGroup& ep) {
  if (batch == 0) return 0;
  // The target model verifies each request's token and its draft tokens; the draft module (its layers) runs
  // once per draft token on one token per request.
  return own_layers(m, hw, e, batch, total_context, ep, e.queries_per_step(), m.layers) +
         own_layers(m, hw, e, batch, total_context, ep, 1, e.mtp_draft_tokens * e.mtp_module_layers);
}

StepPlan decode_group_step(const config::ModelSpec& m, const config::HardwareSpec& hw,
                           const config::EngineSpec& e, double slowest_own_s, double group_batch,
                           const EpGroup& ep) {
  StepPlan s;
  if (group_batch <= 0) return s;
  const int mb = micro_batches(m, e, ep);
  const double avg = group_batch / ep.gpus, q = e.queries_per_step();
  const double draft_layers = e.mtp_draft_tokens * e.mtp_module_layers;
  const double imbalance = m.moe() ? config::expert_imbalance(e, ep.gpus) : 1;
  // Per step: the target model's layers on q tokens per request, the draft module's on one.
  const auto per_step = [&](auto&& per_layer) {
    return m.layers * per_layer(avg * q) + draft_layers * per_layer(avg);
  };
  const double experts = per_step([&](double tokens) {
    return mb * expert_time_s(m, hw, e, Phase::kDecode, imbalance * tokens / mb, ep.gpus);
  });
  // The exchange kernels' send and receive phases hold every SM (their waits none): serial with the compute.
  const double moe_share = m.moe() ? static_cast<double>(m.moe_layers) / m.layers : 0;
  const bool exchanges = m.moe() && ep.gpus > 1;
  const double sm =
      exchanges
          ? per_step([&](double tokens) { return e.decode_exchange_sm_s_per_token * tokens * moe_share; })
          : 0;
  const double cnic = per_step([&](double tokens) { return decode_exchange(m, tokens, ep).cnic; });
  const double nvlink = per_step([&](double tokens) { return decode_exchange(m, tokens, ep).nvlink; });
  // A step passes every MoE layer once per micro-batch; the fill is one MoE layer of one micro-batch.
  const double moe_passes = (m.layers + draft_layers) * moe_share;
  const double lat = m.moe() ? ep_latency_s(e, Phase::kDecode, ep.gpus) : 0;
  const double bytes_s = imbalance * cnic / hw.cnic_bw_Bps;
  OverlapTerms o;
  o.mode = overlap(m, e, ep);
  o.compute = slowest_own_s + experts + sm;
  o.exchange_compute = sm;
  o.overhead = (m.layers + draft_layers) * mb * e.decode_layer_overhead_s;
  o.latency = moe_passes * lat;
  o.bytes_s = bytes_s;
  o.nvlink = imbalance * nvlink_s(hw, nvlink);
  o.fill = moe_passes > 0 ? lat + bytes_s / moe_passes / 2 : 0;
  o.cpu = e.decode_cpu_s;
  s.step_s = o.total();
  s.terms = o;
  s.shared_s = experts + sm;
  s.work = s.step_s * hw.gpu_flops;
  s.exchange_bytes = cnic;
  return s;
}

UniformStep decode_step(const config::ModelSpec& m, const config::HardwareSpec& hw,
                        const config::EngineSpec& e, int batch, double total_context, const EpGroup& ep) {
  const double own = decode_own_s(m, hw, e, batch, total_context, ep);
  UniformStep u{decode_group_step(m, hw, e, own, static_cast<double>(batch) * ep.gpus, ep), {}};
  u.split = u.gpu_split(own).scaled(ep.gpus);
  return u;
}

}  // namespace sim::cost
