// The PE forward passes. One actor per DP-attention group (Cluster::pass_groups_): an EP model's
// cluster.prefill_dp_group_gpus PE GPUs run each layer together, because DP attention is followed by the
// EP MoE exchange (DualPath §6.2); other models, and the default group of 1, run each GPU on its own.
//
// A pass: every GPU of the group forms its batch FIFO from its requests whose KV is in a buffer, under
// the compute quota (§6.2) with the last request chunked by binary search (cost/batch_quota.h). A layer
// then takes the slowest GPU's attention (the barrier) plus the MoE/linear work of the group's tokens
// spread evenly over its GPUs, plus the per-layer overhead. For a group of one, this is the GPU's own
// layer time. Layerwise prefill (§4): the KV load of layer l+1 overlaps the compute of layer l, and
// layer l's KV is pushed to the DE buffers right after its compute (forward_pass.h: how finely that is
// simulated). Basic (no layerwise): a batch's KV must fit in HBM and is loaded before any compute.
// Transfers are aggregated per (source, destination) host, so comms in flight stay O(DEs) per GPU.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "sim/cost/batch_quota.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/cluster.h"
#include "sim/engine/forward_pass.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/timeline.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

namespace {

// outputs.timeline: one "prefill" event per GPU of the group that had work in the pass.
void trace_pass(metrics::Timeline& tl, const PrefillEngineState& pe, const std::vector<PassItem>& batch,
                const std::vector<cost::Chunk>& chunks, double busy_s, double t0, double t1) {
  if (batch.empty()) return;
  double tokens = 0, cached = 0;
  for (const auto& c : chunks) {
    tokens += c.bsz;
    cached += c.cached;
  }
  tl.complete(tl.node_pid(pe.node), tl.engine_tid(pe.node, pe.gpu), "prefill", t0, t1 - t0,
              {{"requests", static_cast<double>(batch.size())},
               {"tokens", tokens},
               {"cached_tokens", cached},
               {"compute_s", busy_s}});
}

}  // namespace

bool Cluster::pe_has_work(const PrefillEngineState& pe) const {
  for (RequestId id : pe.ready)
    if (de_buffer_fits(id)) return true;
  return false;
}

// Under the lock: pe's batch for the next pass (FIFO; requests whose DE buffer is full keep their place).
void Cluster::form_batch(PrefillEngineState& pe, std::vector<PassItem>& batch,
                         std::vector<cost::Chunk>& chunks) {
  const bool layerwise = sc_.policy.layerwise;
  cost::BatchLimits lim;
  if (sc_.policy.batching == "quota") lim.quota_s = sc_.policy.compute_quota_s;
  lim.hbm_bytes = pe_hbm_kv_;
  // HBM per token that must be resident: every layer (Basic), or two layers (layerwise: the layer
  // computing and the next one loading), whatever the simulation's granularity.
  lim.hbm_bytes_per_token = layerwise ? 2 * kv_token_layer_ : kv_token_;
  cost::QuotaBatchFormer former(sc_.model, sc_.hardware, lim);
  std::vector<RequestId> skipped;
  while (!pe.ready.empty() && !former.closed()) {
    const RequestId id = pe.ready.front();
    if (!reserve_de_buffer(id)) {
      skipped.push_back(id);
      pe.ready.pop_front();
      continue;
    }
    const Request& r = table_[id];
    const cost::Chunk c{r.hit + r.prefilled, r.miss - r.prefilled};
    const auto offer = former.offer(c);
    if (offer.verdict == cost::QuotaBatchFormer::Verdict::kRejected) break;
    batch.push_back({id, {c.cached, offer.bsz}});
    pe.ready.pop_front();
  }
  pe.ready.insert(pe.ready.begin(), skipped.begin(), skipped.end());
  chunks = former.chunks();
}

void Cluster::prefill_loop(int group) {
  const std::vector<int>& members = pass_groups_[group];
  const auto& m = sc_.model;
  const auto& hw = sc_.hardware;
  const size_t n = members.size();
  std::vector<std::vector<PassItem>> batches(n);
  std::vector<std::vector<cost::Chunk>> chunks(n);
  std::vector<double> attention(n), busy(n);
  while (true) {
    // Blocked while no GPU of the group has a request ready whose DE buffer has room (then each PE
    // registers with the decode nodes it waits for, which wake it when they free space).
    auto lock = lock_when(pes_[members[0]].cv, [&]() {
      for (int p : members)
        if (pe_has_work(pes_[p])) return false;
      for (int p : members)
        for (RequestId id : pes_[p].ready) {
          auto& w = nodes_[des_[table_[id].de].node].waiting_pes;
          if (std::find(w.begin(), w.end(), p) == w.end()) w.push_back(p);
        }
      return true;
    });
    if (finished_) return;
    for (size_t i = 0; i < n; ++i) {
      batches[i].clear();
      form_batch(pes_[members[i]], batches[i], chunks[i]);
    }
    lock.unlock();

    // Layer time: the slowest attention, then the group's linear work spread over its GPUs.
    const double now0 = engine::now();
    double tokens = 0, max_attention = 0, sum_attention = 0;
    for (size_t i = 0; i < n; ++i) {
      attention[i] = cost::attention_time_s(m, hw, chunks[i]);
      max_attention = std::max(max_attention, attention[i]);
      sum_attention += attention[i];
      for (const auto& c : chunks[i]) tokens += c.bsz;
      for (const auto& it : batches[i])
        if (table_[it.id].t_prefill_start < 0) table_[it.id].t_prefill_start = now0;
    }
    const double linear =
        tokens > 0 ? cost::linear_time_s(m, hw, tokens / n) + m.prefill_layer_overhead_s : 0;
    const double t_layer = max_attention + linear;
    for (size_t i = 0; i < n; ++i) busy[i] = (attention[i] + linear) * m.layers;
    if (n > 1 && sum_attention > 0)
      rec_->attention_balance.push_back({now0, max_attention * n / sum_attention});

    // Transfers (bytes per layer, aggregated by endpoints).
    Flows load, push;
    for (size_t i = 0; i < n; ++i) {
      const PrefillEngineState& pe = pes_[members[i]];
      sg4::Host* gpu = h_.nodes[pe.node].gpus[pe.gpu];
      sg4::Host* own_buf = h_.nodes[pe.node].bufs[pe.gpu];
      for (const auto& it : batches[i]) {
        Request& r = table_[it.id];
        if (r.zero_cost) continue;
        sg4::Host* de_buf = h_.nodes[des_[r.de].node].bufs[des_[r.de].gpu];
        const double f = r.pe_fraction;
        load[{own_buf, gpu}] += f * it.chunk.cached * kv_token_layer_;
        load[{de_buf, gpu}] += (1 - f) * it.chunk.cached * kv_token_layer_;
        // PE path: the hit KV goes on to the DE buffer once; every computed token's KV goes there too.
        const double pushed_hit = r.hit_pushed ? 0 : f * r.hit;
        push[{gpu, de_buf}] += (pushed_hit + it.chunk.bsz) * kv_token_layer_;
        rec_->hit_bytes_loaded += r.hit_pushed ? 0 : r.hit * kv_token_;
        r.hit_pushed = true;
      }
    }
    auto compute = [&](double t) {
      timed_started();
      engine::sleep_for(t);
      rec_->timed_in_flight--;
      rec_->compute_activities++;
    };
    const ForwardPass fp{load, push, t_layer, m.layers};
    if (!sc_.policy.layerwise)
      run_whole(*links_, fp, compute);
    else if (sc_.sim.layer_group == 0)
      run_fluid(*links_, fp, compute);
    else
      run_groups(*links_, fp, sc_.sim.layer_group, compute);

    if (timeline_ != nullptr)
      for (size_t i = 0; i < n; ++i)
        trace_pass(*timeline_, pes_[members[i]], batches[i], chunks[i], busy[i], now0, engine::now());

    // Account the computed tokens; finished requests go to their DE, a chunked one stays at the head.
    for (size_t i = 0; i < n; ++i) {
      PrefillEngineState& pe = pes_[members[i]];
      if (tokens > 0) pe.busy_s += busy[i];  // its attention and its share of the group's MoE
      for (auto it = batches[i].rbegin(); it != batches[i].rend(); ++it) {
        Request& r = table_[it->id];
        r.prefilled += it->chunk.bsz;
        if (r.prefilled < r.miss - 1e-9) pe.ready.push_front(it->id);
      }
    }
    for (size_t i = 0; i < n; ++i)
      for (const auto& it : batches[i]) {
        const Request& r = table_[it.id];
        if (r.prefilled < r.miss - 1e-9) continue;
        if (timeline_ != nullptr && timeline_->sampled_agent(r.agent)) {
          // Before on_prefill_done: a one-token turn ends there, and its slot may be reused at once.
          metrics::TurnTimes t = metrics::turn_times(r);
          t.first = engine::now();
          timeline_->turn_first_token(t);
          if (r.gen <= 1) {
            t.done = t.first;
            timeline_->turn_done(t);
          }
        }
        on_prefill_done(it.id);
      }
  }
}

}  // namespace sim::engine
