#include "sim/cost/unloaded.h"

#include <algorithm>
#include <vector>

#include "sim/config/units.h"
#include "sim/cost/compute_plan.h"
#include "sim/storage/read_rate.h"

namespace sim::cost {

UnloadedLatency::UnloadedLatency(const config::ScenarioConfig& sc) : sc_(sc) {
  const auto& m = sc.model;
  const auto& hw = sc.prefill_hardware;
  const int pe_unit = config::unit_gpus(sc, config::UnitRole::kPrefill);
  prefill_ep_ = ep_group(m, hw, pe_unit);
  decode_ep_ = ep_group(m, sc.decode_hardware, config::unit_gpus(sc, config::UnitRole::kDecode));
  // The PEs pass in groups (engine/prefill_service.cpp): an EP model's DP-attention groups, a dense model's
  // tensor-parallel unit (a unit of one GPU for a model every GPU holds whole).
  const int dp = sc.cluster.prefill_dp_group_gpus;
  dp_gpus_ = dp == 0 ? pe_unit : dp;
  limits_ = batch_limits(sc.policy, sc.engine, m);
  kv_token_ = kv_bytes_per_token(m);
  kv_token_layer_ = kv_bytes_per_token_layer(m);
  read_Bps_ = storage::read_Bps(hw, sc.engine, sc.policy.persist_block_tokens * kv_token_);
  h2d_Bps_ = std::min(hw.cnic_bw_Bps, hw.dram_bw_Bps);
  if (hw.pcie_bw_Bps > 0) h2d_Bps_ = std::min(h2d_Bps_, hw.pcie_bw_Bps);
  // Between a prefill GPU and a decode node: the slower of the two CNICs.
  p2d_Bps_ = std::min(hw.cnic_bw_Bps, sc.decode_hardware.cnic_bw_Bps);
}

UnloadedTtft UnloadedLatency::ttft(double hit, double miss) const {
  const auto& m = sc_.model;
  const auto& hw = sc_.prefill_hardware;
  UnloadedTtft u;
  u.read_s = hit > 0 ? hit * kv_token_ / read_Bps_ : 0;
  const bool layerwise = sc_.policy.layerwise;
  double cached = hit, left = miss;
  std::vector<std::vector<Chunk>> per_gpu(static_cast<size_t>(dp_gpus_));
  while (left > 0) {
    const QuotaBatch b = form_quota_batch({Chunk{cached, left}}, m, hw, sc_.engine, limits_);
    const double bsz = b.chunk_bsz > 0 ? b.chunk_bsz : left;
    per_gpu[0] = {Chunk{cached, bsz}};
    const PassPlan p = prefill_pass(m, hw, sc_.engine, per_gpu, prefill_ep_);
    // A pass loads the context it attends to (the hit, then the earlier chunks' KV back from the decode
    // node's buffer) and pushes what it adds (the first pass: the hit too, on the PE path).
    const double load_layer_s = cached * kv_token_layer_ / (u.passes == 0 ? h2d_Bps_ : p2d_Bps_);
    const double push_layer_s = (u.passes == 0 ? hit + bsz : bsz) * kv_token_layer_ / p2d_Bps_;
    if (layerwise) {  // a pipeline of layers: its slowest stage sets the pace; the first load, the last push
      // The first pass's H2D and its push both cross the PE GPU's CNIC read direction (sim/README.md,
      // "The platform and its routes"): they share it.
      const double shared_s = u.passes == 0 ? (cached + hit + bsz) * kv_token_layer_ / hw.cnic_bw_Bps : 0.0;
      u.prefill_s += p.layers * std::max({p.layer_s, load_layer_s, push_layer_s, shared_s});
      u.load_s += load_layer_s;
      u.push_s += push_layer_s;
    } else {  // load, compute, push in series
      u.prefill_s += p.layers * p.layer_s;
      u.load_s += p.layers * load_layer_s;
      u.push_s += p.layers * push_layer_s;
    }
    u.passes++;
    cached += bsz;
    left -= bsz;
  }
  return u;
}

double UnloadedLatency::tpot_s(double context) const {
  const auto& m = sc_.model;
  const auto& hw = sc_.decode_hardware;
  const auto& e = sc_.engine;
  // A step yields the engine's tokens per step (1 without MTP): the TPOT counts accepted tokens.
  return decode_group_step(m, hw, e, decode_own_s(m, hw, e, 1, context, decode_ep_), 1, decode_ep_).step_s /
         e.tokens_per_step();
}

}  // namespace sim::cost
