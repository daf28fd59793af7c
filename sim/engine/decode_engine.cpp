// The DE actors (three per GPU):
// - loader: takes requests whose prompt KV is complete in the DE buffer (FIFO), allocates HBM (waits while
//   it is full), H2D through the GPU's CNIC, frees the buffer, and hands the request to the batch;
// - decode: a continuous batch. One plan = the steps until the earliest request finishes, at a constant
//   step time from the cost model; a join wakes the actor, which finishes the step in progress and
//   re-plans. So the batch costs O(changes) events, not O(tokens).
// - persist: every full block of generated KV (policy.persist_block_tokens) goes D2H then to storage; the
//   appended tokens' KV goes from the DE buffer to storage. Pending bytes are sent in aggregate, at most
//   once per sim.persist_interval_s (what becomes pending during an interval waits for its end).
#include <algorithm>
#include <cmath>

#include "sim/cost/compute_model.h"
#include "sim/engine/cluster.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/timeline.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

void Cluster::decode_loader(int de_id) {
  DecodeEngineState& de = des_[de_id];
  sg4::Host* gpu = h_.nodes[de.node].gpus[de.gpu];
  sg4::Host* buf = h_.nodes[de.node].bufs[de.gpu];
  auto need = [this](const Request& r) { return (r.hit + r.miss + r.gen) * kv_token_; };
  double& hbm_free = de_load(de_id).free_hbm;
  // The waiting request to load next: the head (FIFO), except that a whole-DE claim (dispatch.cpp) waits
  // until it is the DE's only request and lets the requests placed on the DE before it go first.
  auto next = [&]() -> int {
    for (size_t i = 0; i < de.waiting.size(); ++i) {
      const Request& r = table_[de.waiting[i]];
      if (r.hbm_whole_de) {
        if (de_load(de_id).seq == 1) return static_cast<int>(i);
        continue;
      }
      if (r.hbm_reserved) return static_cast<int>(i);
      // Immediate schedulers: FIFO, HBM allocated here; a request larger than the whole HBM still runs
      // alone rather than deadlock.
      return need(r) > hbm_free && hbm_free < de_hbm_kv_ - 1 ? -1 : static_cast<int>(i);
    }
    return -1;
  };
  while (true) {
    int pick = -1;
    auto lock = lock_when(de.cv_loader, [&]() { return (pick = next()) < 0; });
    if (finished_) return;
    const RequestId id = de.waiting[pick];
    de.waiting.erase(de.waiting.begin() + pick);
    Request& r = table_[id];
    if (!r.hbm_reserved) {  // a queued scheduler promised it when it chose this DE
      r.hbm_bytes = need(r);
      hbm_free -= r.hbm_bytes;
      r.t_hbm = engine::now();
    }
    lock.unlock();
    if (!r.zero_cost) links_->send(buf, gpu, (r.hit + r.miss) * kv_token_);
    Request& q = table_[id];
    free_buffer(de.node, q.de_buf_bytes);
    q.de_buf_bytes = 0;
    q.t_decode_join = engine::now();
    de.joins.push_back(id);
    de.cv_decode->notify_all();
  }
}

void Cluster::decode_loop(int de_id) {
  DecodeEngineState& de = des_[de_id];
  const auto& m = sc_.model;
  const auto& hw = sc_.hardware;
  const double block = sc_.policy.persist_block_tokens;
  std::vector<RequestId> still;
  while (true) {
    {
      auto lock = lock_when(de.cv_decode, [&]() { return de.batch.empty() && de.joins.empty(); });
      if (finished_) return;
      de.batch.insert(de.batch.end(), de.joins.begin(), de.joins.end());
      de.joins.clear();
      de.max_batch = std::max(de.max_batch, static_cast<int>(de.batch.size()));
    }

    double context = 0, steps_left = 1e300;
    for (RequestId id : de.batch) {
      const Request& r = table_[id];
      context += r.hit + r.miss + 1 + r.decoded;
      steps_left = std::min(steps_left, r.gen - 1 - r.decoded);
    }
    const double tau = cost::decode_step_time_s(m, hw, static_cast<int>(de.batch.size()), context);
    const double t0 = engine::now();
    const double deadline = t0 + steps_left * tau;
    {
      std::unique_lock<sg4::Mutex> lock(*mutex_);
      timed_started();
      if (de.joins.empty()) de.cv_decode->wait_until(lock, deadline);
      rec_->timed_in_flight--;
    }
    double steps = steps_left;
    const double now = engine::now();
    if (now < deadline - 1e-12) {  // woken early (a join, or the end of the run)
      // Finish the step in progress, then re-plan with the newcomers.
      steps = std::min(steps_left, std::floor((now - t0) / tau + 1e-9) + 1);
      engine::sleep_for(std::max(0.0, t0 + steps * tau - engine::now()));
    }
    de.busy_s += steps * tau;
    rec_->decode_plans++;
    if (timeline_ != nullptr && steps > 0)
      timeline_->complete(timeline_->node_pid(de.node), timeline_->engine_tid(de.node, de.gpu), "decode", t0,
                          steps * tau,
                          {{"batch", static_cast<double>(de.batch.size())},
                           {"steps", steps},
                           {"step_ms", tau * 1e3},
                           {"context_tokens", context}});

    still.clear();
    double persist_bytes = 0;
    for (RequestId id : de.batch) {
      Request& r = table_[id];
      if (r.decoded == 0 && steps >= 1) r.t_second = t0 + tau;
      r.decoded += steps;
      const bool done = r.decoded >= r.gen - 1 - 1e-9;
      // Generated tokens so far include the first one, produced by the prefill.
      const double full = done ? r.gen : std::floor((r.decoded + 1) / block) * block;
      if (!r.zero_cost && full > r.persisted_tokens) persist_bytes += (full - r.persisted_tokens) * kv_token_;
      r.persisted_tokens = std::max(r.persisted_tokens, full);
      if (done) {
        if (timeline_ != nullptr && timeline_->sampled_agent(r.agent)) {
          metrics::TurnTimes t = metrics::turn_times(r);
          t.done = t0 + steps * tau;
          timeline_->turn_done(t);
        }
        on_turn_done(id, t0 + steps * tau);
      } else {
        still.push_back(id);
      }
    }
    de.batch.swap(still);
    queue_persist(de, persist_bytes, 0);
    de.cv_loader->notify_all();
  }
}

void Cluster::persist_loop(int de_id) {
  DecodeEngineState& de = des_[de_id];
  const auto& n = h_.nodes[de.node];
  while (true) {
    auto lock = lock_when(de.cv_persist, [&]() { return de.persist_gpu_bytes + de.persist_dram_bytes < 1; });
    if (de.persist_gpu_bytes + de.persist_dram_bytes < 1) return;
    const double gpu_bytes = de.persist_gpu_bytes, dram_bytes = de.persist_dram_bytes;
    de.persist_gpu_bytes = de.persist_dram_bytes = 0;
    lock.unlock();
    const double t0 = engine::now();
    links_->send(n.gpus[de.gpu], n.bufs[de.gpu], gpu_bytes);  // D2H
    links_->send(n.dram, n.storage, gpu_bytes + dram_bytes);
    // Coalesce: what becomes pending meanwhile goes out together, one interval after this write began.
    const double rest = t0 + sc_.sim.persist_interval_s - engine::now();
    if (rest > 0 && !finished_) {
      timed_started();
      engine::sleep_for(rest);
      rec_->timed_in_flight--;
    }
  }
}

}  // namespace sim::engine
