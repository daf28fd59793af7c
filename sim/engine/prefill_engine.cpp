// The PE actor (one per GPU): forward batches formed FIFO from requests whose KV is in a buffer, under the
// compute quota (DualPath §6.2) with the last request chunked by binary search. Layerwise prefill (§4):
// layers run in groups; the KV load of group l+1 overlaps the compute of group l, and group l's KV is
// pushed to the DE buffers right after its compute. Basic (no layerwise): the whole batch's KV must fit in
// HBM and is loaded before any compute. Transfers per group are aggregated per (source, destination) host,
// so comms in flight stay O(DEs) per PE whatever the batch size.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "sim/cost/compute_model.h"
#include "sim/engine/cluster.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

namespace {

struct Item {
  RequestId id;
  cost::Chunk chunk;
};

// Bytes per (source, destination), in first-use order: the order comms start in must not depend on
// pointer values, or runs would differ from one process to the next.
class Flows {
 public:
  double& operator[](std::pair<sg4::Host*, sg4::Host*> ends) {
    for (auto& f : flows_)
      if (f.first == ends) return f.second;
    flows_.emplace_back(ends, 0.0);
    return flows_.back().second;
  }
  auto begin() const { return flows_.begin(); }
  auto end() const { return flows_.end(); }

 private:
  std::vector<std::pair<std::pair<sg4::Host*, sg4::Host*>, double>> flows_;
};

void start_all(metrics::LinkStats& links, const Flows& flows, double scale,
               std::vector<metrics::LinkStats::Handle>& out) {
  for (const auto& [ends, bytes] : flows)
    if (bytes * scale >= 1) out.push_back(links.start(ends.first, ends.second, bytes * scale));
}

void wait_all(metrics::LinkStats& links, std::vector<metrics::LinkStats::Handle>& handles) {
  for (auto hd : handles) links.wait(hd);
  handles.clear();
}

}  // namespace

void Cluster::prefill_loop(int pe_id) {
  PrefillEngineState& pe = pes_[pe_id];
  const auto& m = sc_.model;
  const auto& hw = sc_.hardware;
  const bool layerwise = sc_.policy.layerwise;
  const bool quota = sc_.policy.batching == "quota";
  const int groups = layerwise ? layer_groups_ : 1;
  const int per_group = (m.layers + groups - 1) / groups;
  sg4::Host* gpu = h_.nodes[pe.node].gpus[pe.gpu];
  sg4::Host* own_buf = h_.nodes[pe.node].bufs[pe.gpu];

  std::vector<Item> batch;
  std::vector<cost::Chunk> chunks;
  std::vector<RequestId> skipped;
  while (true) {
    // Blocked while nothing is ready, or while no ready request has room in its DE buffer (then the PE
    // registers with those decode nodes, which wake it when they free space).
    auto lock = lock_when(pe.cv, [&]() {
      if (pe.ready.empty()) return true;
      for (RequestId id : pe.ready)
        if (de_buffer_fits(id)) return false;
      for (RequestId id : pe.ready) {
        auto& w = nodes_[des_[table_[id].de].node].waiting_pes;
        if (std::find(w.begin(), w.end(), pe_id) == w.end()) w.push_back(pe_id);
      }
      return true;
    });
    if (finished_) return;

    // Form the batch.
    batch.clear();
    chunks.clear();
    double hbm = 0;
    // HBM per token that must be resident: every layer (Basic) or one group of layers (layerwise).
    const double hbm_per_token = layerwise ? kv_token_layer_ * per_group : kv_token_;
    // FIFO, skipping requests whose DE buffer is full (they keep their place).
    skipped.clear();
    while (!pe.ready.empty()) {
      const RequestId id = pe.ready.front();
      if (!reserve_de_buffer(id)) {
        skipped.push_back(id);
        pe.ready.pop_front();
        continue;
      }
      const Request& r = table_[id];
      cost::Chunk c{r.hit + r.prefilled, r.miss - r.prefilled};
      const double need = (c.cached + c.bsz) * hbm_per_token;
      if (!batch.empty() && hbm + need > pe_hbm_kv_) break;
      chunks.push_back(c);
      if (quota && cost::attention_time_s(m, hw, chunks) > sc_.policy.compute_quota_s) {
        // Largest bsz' that still fits the quota (binary search); at least one token when alone.
        double lo = 0, hi = c.bsz;
        while (hi - lo > 1) {
          const double mid = std::floor((lo + hi) / 2);
          chunks.back().bsz = mid;
          (cost::attention_time_s(m, hw, chunks) <= sc_.policy.compute_quota_s ? lo : hi) = mid;
        }
        if (lo < 1 && !batch.empty()) {
          chunks.pop_back();
          break;
        }
        chunks.back().bsz = std::max(1.0, lo);
        batch.push_back({id, chunks.back()});
        pe.ready.pop_front();
        break;
      }
      hbm += need;
      batch.push_back({id, c});
      pe.ready.pop_front();
    }
    pe.ready.insert(pe.ready.begin(), skipped.begin(), skipped.end());
    lock.unlock();
    const double now0 = engine::now();
    for (const auto& it : batch)
      if (table_[it.id].t_prefill_start < 0) table_[it.id].t_prefill_start = now0;

    // Per-group transfers (bytes per layer, aggregated by endpoints).
    Flows load, push;
    for (const auto& it : batch) {
      Request& r = table_[it.id];
      if (r.zero_cost) continue;
      const auto& dn = h_.nodes[des_[r.de].node];
      sg4::Host* de_buf = dn.bufs[des_[r.de].gpu];
      const double f = r.pe_fraction;
      load[{own_buf, gpu}] += f * it.chunk.cached * kv_token_layer_;
      load[{de_buf, gpu}] += (1 - f) * it.chunk.cached * kv_token_layer_;
      // PE path: the hit KV goes on to the DE buffer once; every computed token's KV goes there too.
      const double pushed_hit = r.hit_pushed ? 0 : f * r.hit;
      push[{gpu, de_buf}] += (pushed_hit + it.chunk.bsz) * kv_token_layer_;
      rec_->hit_bytes_loaded += r.hit_pushed ? 0 : r.hit * kv_token_;
      r.hit_pushed = true;
    }
    const double t_layer = cost::layer_time_s(m, hw, chunks);

    std::vector<metrics::LinkStats::Handle> loading, pushing;
    start_all(*links_, load, per_group, loading);
    wait_all(*links_, loading);
    for (int g = 0; g < groups; ++g) {
      const int layers = std::min(per_group, m.layers - g * per_group);
      if (layers <= 0) break;
      const int next_layers = std::min(per_group, m.layers - (g + 1) * per_group);
      if (next_layers > 0) start_all(*links_, load, next_layers, loading);
      const double t = t_layer * layers;
      timed_started();
      engine::sleep_for(t);
      rec_->timed_in_flight--;
      pe.busy_s += t;
      rec_->compute_activities++;
      start_all(*links_, push, layers, pushing);
      wait_all(*links_, loading);
    }
    wait_all(*links_, pushing);

    // Account the computed tokens; finished requests go to their DE, a chunked one stays at the head.
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
      Request& r = table_[it->id];
      r.prefilled += it->chunk.bsz;
      if (r.prefilled < r.miss - 1e-9) pe.ready.push_front(it->id);
    }
    for (const auto& it : batch)
      if (table_[it.id].prefilled >= table_[it.id].miss - 1e-9) on_prefill_done(it.id);
  }
}

}  // namespace sim::engine
