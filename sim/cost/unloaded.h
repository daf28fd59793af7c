// A turn's unloaded latency: the turn alone on an idle cluster of the scenario's hardware, from the cost
// model (pure; no SimGrid). The relative SLO (slo.mode = "relative") judges each turn against a multiple of
// it, and `dpsim plan` names the turns that no cluster size can serve within an absolute bound.
//
//   unloaded TTFT = read + prefill, the prefill as the engine's pass pipeline runs it (engine/forward_pass.h)
//     read     its hit KV (hit x KV bytes per token) from storage into its prefill node at one node's idle
//              storage read rate (storage/read_rate.h: the SNIC, or the storage backend behind it for Full
//              Blocks of policy.persist_block_tokens): the PE path, which every read policy can take. A
//              policy that reads through two nodes' SNICs (dualpath, split) can beat it: it is the reference
//              every policy is judged against, not a bound no policy can pass;
//     passes   its forward passes alone in its DP-attention group: the miss in chunks under the compute
//              quota (policy.batching = quota: each chunk the largest whose layer's attention fits
//              policy.compute_quota_s, as cost/batch_quota.h forms it; fifo: one chunk), each pass
//              layers x the pass plan's layer time (cost/compute_plan.h: attention, GEMMs, experts, fixed
//              costs and the EP exchange overlapped as policy.ep_overlap says);
//     load     per pass, the context it attends to into the GPU: the hit from the prefill node's DRAM (H2D:
//              min of the CNIC, the DRAM and PCIe when modelled), then the earlier chunks' KV back from the
//              decode node's buffer over the CNIC;
//     push     per pass, what it adds to the decode node's buffer over one CNIC (the first pass: the hit
//              too, on the PE path).
//   Basic (policy.layerwise = false) runs each pass's load, compute and push in series. Layerwise prefill
//   runs them as a pipeline of layers: each layer takes the slowest of its compute, its load and its push
//   (the first pass's H2D and push share the PE GPU's CNIC read direction), plus the first layer's load
//   before and the last layer's push after.
//   unloaded TPOT = one decode step of its decode unit holding only this turn, at its context hit + miss.
// With a hardware file per role: the read, the passes and the H2D on the prefill node's; a transfer between
// the two nodes at the slower CNIC; the decode step on the decode node's.
#pragma once

#include "sim/config/scenario.h"
#include "sim/cost/batch_quota.h"
#include "sim/cost/compute_model.h"

namespace sim::cost {

struct UnloadedTtft {
  double read_s = 0;     // storage -> the prefill node's DRAM
  double load_s = 0;     // what of the H2D load no compute hides
  double prefill_s = 0;  // the passes
  double push_s = 0;     // what of the push to the decode node no compute hides
  int passes = 0;
  double total_s() const { return read_s + load_s + prefill_s + push_s; }
};

class UnloadedLatency {
 public:
  // REQUIRES: a loaded scenario (units resolved); `sc` outlives this.
  explicit UnloadedLatency(const config::ScenarioConfig& sc);
  // REQUIRES: hit >= 0, miss >= 1.
  UnloadedTtft ttft(double hit, double miss) const;
  double ttft_s(double hit, double miss) const { return ttft(hit, miss).total_s(); }
  // REQUIRES: context >= 1.
  double tpot_s(double context) const;
  // A whole turn alone on the cluster, issue to last token: its TTFT, then gen - 1 steps at the TPOT of its
  // prompt (as the relative SLO judges them). REQUIRES: hit >= 0, miss >= 1, gen >= 1.
  double turn_s(double hit, double miss, double gen) const {
    return ttft_s(hit, miss) + (gen - 1) * tpot_s(hit + miss);
  }

 private:
  const config::ScenarioConfig& sc_;
  EpGroup prefill_ep_, decode_ep_;
  int dp_gpus_ = 1;
  BatchLimits limits_;
  double read_Bps_ = 0, h2d_Bps_ = 0, p2d_Bps_ = 0;
  double kv_token_ = 0, kv_token_layer_ = 0;
};

}  // namespace sim::cost
