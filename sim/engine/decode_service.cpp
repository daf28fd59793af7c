#include "sim/engine/decode_service.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/core/check.h"
#include "sim/cost/compute_plan.h"
#include "sim/engine/dispatcher.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/timeline.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

DecodeService::DecodeService(EngineContext& ctx) : c_(ctx) {
  // One sharding rule per role: the decode role's GPUs hold the weights (what sizes DE HBM, HbmPool) and
  // each step reads a GPU's share of them.
  ep_ = cost::ep_group(c_.sc.model, c_.sc.hardware, c_.h.gpus_of(platform::NodeRole::kDecode));
  for (const auto& [node, gpu] : c_.h.engines_of(platform::NodeRole::kDecode)) {
    DecodeEngineState de;
    de.id = static_cast<int>(des_.size());
    de.node = node;
    de.gpu = gpu;
    de.cv_loader = sg4::ConditionVariable::create();
    de.cv_decode = sg4::ConditionVariable::create();
    de.cv_persist = sg4::ConditionVariable::create();
    des_.push_back(de);
  }
}

void DecodeService::start() {
  for (auto& de : des_) {
    sg4::Host* host = c_.h.nodes[de.node].gpus[de.gpu];
    engine::spawn("de-loader", host, [this, id = de.id]() { loader(id); });
    engine::spawn("de-decode", host, [this, id = de.id]() { decode_loop(id); });
    engine::spawn("de-persist", host, [this, id = de.id]() { persist_loop(id); });
  }
}

void DecodeService::wake_all() {
  for (auto& de : des_) {
    de.cv_loader->notify_all();
    de.cv_decode->notify_all();
    de.cv_persist->notify_all();
  }
}

void DecodeService::queue_persist(DecodeEngineState& de, double gpu_bytes, double dram_bytes) {
  de.persist_gpu_bytes += gpu_bytes;
  de.persist_dram_bytes += dram_bytes;
  if (gpu_bytes + dram_bytes > 0) de.cv_persist->notify_all();
}

void DecodeService::prompt_ready(RequestId id) {
  Request& r = c_.requests[id];
  DecodeEngineState& de = des_[r.de];
  if (c_.sc.policy.persist_append) queue_persist(de, 0, wire_bytes(r, r.miss * c_.kv_token));
  if (r.gen <= 1) {  // one-token turn: done with its first token
    c_.buffers.release(r, de.node, false);
    queue_persist(de, 0, wire_bytes(r, r.gen * c_.kv_token));
    turn_end(id, r.t_first);
    de.cv_loader->notify_all();  // a whole-DE claim may be waiting for the DE's other requests to end
    return;
  }
  de.waiting.push_back(id);
  de.cv_loader->notify_all();
}

void DecodeService::turn_end(RequestId id, double t_done) {
  Request& r = c_.requests[id];
  r.t_done = t_done;
  const int de = r.de;
  c_.loads.discharge_de(de, r);
  // The DE HBM the request held, or was promised by a queued scheduler: a one-token turn ends at its
  // prefill and never reaches the decode batch, yet its DE fetch promised HBM for it.
  if (r.t_hbm >= 0) {  // HBM byte-seconds before the turn joined the decode batch, and in it
    const double join = r.t_decode_join >= 0 ? r.t_decode_join : t_done;
    c_.rec.hbm_waiting_byte_s += r.hbm_bytes * (join - r.t_hbm);
    c_.rec.hbm_decoding_byte_s += r.hbm_bytes * (t_done - join);
  }
  c_.hbm.release(r, de);
  dispatcher_->de_load_left(de);
  turns_->turn_done(id, t_done);
}

void DecodeService::loader(int de_id) {
  DecodeEngineState& de = des_[de_id];
  sg4::Host* gpu = c_.h.nodes[de.node].gpus[de.gpu];
  sg4::Host* buf = c_.h.nodes[de.node].bufs[de.gpu];
  // The waiting request to load next: the head (FIFO), except that a whole-DE claim (dispatcher.cpp) waits
  // until it is the DE's only request and lets the requests placed on the DE before it go first.
  auto next = [&]() -> int {
    for (size_t i = 0; i < de.waiting.size(); ++i) {
      const Request& r = c_.requests[de.waiting[i]];
      if (r.hbm_whole_de) {
        if (c_.loads.de_seq(de_id) == 1) return static_cast<int>(i);
        continue;
      }
      if (r.hbm_reserved) return static_cast<int>(i);
      return c_.hbm.can_allocate(r, de_id) ? static_cast<int>(i) : -1;  // immediate schedulers: FIFO
    }
    return -1;
  };
  while (true) {
    int pick = -1;
    auto lock = c_.run.lock_when(de.cv_loader, [&]() { return (pick = next()) < 0; });
    if (c_.run.finished()) return;
    const RequestId id = de.waiting[pick];
    de.waiting.erase(de.waiting.begin() + pick);
    Request& r = c_.requests[id];
    if (!r.hbm_reserved) c_.hbm.allocate(r, de_id, now());  // a queued scheduler promised it already
    c_.run.release(lock);
    const Status st = c_.transport.send(buf, gpu, wire_bytes(r, (r.hit + r.miss) * c_.kv_token));  // H2D
    SIM_CHECK(st.is_ok(), "H2D on DE {}: {}", de_id, st.message());
    c_.buffers.release(r, de.node, false);
    r.t_decode_join = now();
    de.joins.push_back(id);
    de.cv_decode->notify_all();
  }
}

void DecodeService::decode_loop(int de_id) {
  DecodeEngineState& de = des_[de_id];
  sg4::Host* gpu = c_.h.nodes[de.node].gpus[de.gpu];
  const double block = c_.sc.policy.persist_block_tokens;
  std::vector<RequestId> still;
  while (true) {
    {
      auto lock = c_.run.lock_when(de.cv_decode, [&]() { return de.batch.empty() && de.joins.empty(); });
      if (c_.run.finished()) return;
      de.batch.insert(de.batch.end(), de.joins.begin(), de.joins.end());
      de.joins.clear();
      de.max_batch = std::max(de.max_batch, static_cast<int>(de.batch.size()));
    }

    double context = 0, steps_left = 1e300;
    for (RequestId id : de.batch) {
      const Request& r = c_.requests[id];
      context += r.hit + r.miss + 1 + r.decoded;
      steps_left = std::min(steps_left, r.gen - 1 - r.decoded);
    }
    const cost::StepPlan step =
        cost::decode_step(c_.sc.model, c_.sc.hardware, static_cast<int>(de.batch.size()), context, ep_);
    const double tau = step.step_s;
    const double t0 = now();
    // The EP exchange of the plan's steps runs beside its compute, one collective flow paced at a step's
    // bytes per step; the plan ends when both have. None for an EP group within one node (xb = 0).
    const double xb = step.exchange_bytes;
    auto exchange = [&](double steps) {
      return xb > 0 ? std::optional(c_.transport.start(gpu, gpu, steps * xb,
                                                       transport::TrafficClass::kCollective, xb / tau))
                    : std::nullopt;
    };
    // The plan runs until the earliest request is done, unless a join (or the end of the run) cuts it:
    // then the step in progress is finished and the batch re-planned with the newcomers.
    double steps = steps_left;
    if (!de.joins.empty()) {  // a join came while the batch was taken: one step, then re-plan
      steps = 1;
      const auto x = exchange(1);
      de.busy_s += c_.gpu.run_one(gpu, step.work);
      wait_exchange(x, de_id);
    } else {
      const double work = steps_left * step.work, deadline = t0 + steps_left * tau;
      const auto x = exchange(steps_left);
      const simgrid::s4u::ExecPtr plan = c_.gpu.start(gpu, work);
      {
        std::unique_lock<sg4::Mutex> lock(c_.run.mutex());
        if (de.joins.empty() && !c_.run.finished()) de.cv_decode->wait_until(lock, deadline);
      }
      const bool cut = now() < deadline - 1e-12;  // woken early: a join, or the end of the run
      if (cut) {
        // The step in progress runs to its end on the plan's execution, which is cut there.
        steps = std::min(steps_left, std::floor((now() - t0) / tau + 1e-9) + 1);
        const double rest = t0 + steps * tau - now();
        if (rest > 0) timed_sleep(c_, rest);
      }
      de.busy_s += c_.gpu.finish(plan, work, cut, t0);
      if (!cut) {
        wait_exchange(x, de_id);
      } else if (x) {  // the steps done must have exchanged their bytes; the rest of the flow is withdrawn
        const double owed = steps * xb - c_.transport.cancel(*x);
        if (owed >= 1)
          wait_exchange(c_.transport.start(gpu, gpu, owed, transport::TrafficClass::kCollective), de_id);
      }
    }
    // A congested exchange stretches the steps: they end together with it.
    const double t_end = std::max(now(), t0 + steps * tau), step_s = (t_end - t0) / steps;
    c_.rec.decode_plans++;
    if (c_.timeline != nullptr && steps > 0)
      c_.timeline->complete(c_.timeline->node_pid(de.node), c_.timeline->engine_tid(de.node, de.gpu),
                            "decode", t0, t_end - t0,
                            {{"batch", static_cast<double>(de.batch.size())},
                             {"steps", steps},
                             {"step_ms", step_s * 1e3},
                             {"context_tokens", context}});

    still.clear();
    double persist_bytes = 0;
    for (RequestId id : de.batch) {
      Request& r = c_.requests[id];
      if (r.decoded == 0 && steps >= 1) r.t_second = t0 + step_s;
      r.decoded += steps;
      const bool done = r.decoded >= r.gen - 1 - 1e-9;
      // Generated tokens so far include the first one, produced by the prefill.
      const double full = done ? r.gen : std::floor((r.decoded + 1) / block) * block;
      if (full > r.persisted_tokens)
        persist_bytes += wire_bytes(r, (full - r.persisted_tokens) * c_.kv_token);
      r.persisted_tokens = std::max(r.persisted_tokens, full);
      if (done) {
        turn_end(id, t_end);
      } else {
        still.push_back(id);
      }
    }
    const bool ended = still.size() < de.batch.size();
    de.batch.swap(still);
    queue_persist(de, persist_bytes, 0);
    // The loader waits for HBM or for the DE to empty: only a turn that ended changes either.
    if (ended) de.cv_loader->notify_all();
  }
}

void DecodeService::wait_exchange(std::optional<transport::Transport::Handle> x, int de_id) {
  if (!x) return;
  const Status st = c_.transport.wait(*x);
  SIM_CHECK(st.is_ok(), "EP exchange of DE {}: {}", de_id, st.message());
}

void DecodeService::persist_loop(int de_id) {
  DecodeEngineState& de = des_[de_id];
  const auto& n = c_.h.nodes[de.node];
  while (true) {
    auto lock =
        c_.run.lock_when(de.cv_persist, [&]() { return de.persist_gpu_bytes + de.persist_dram_bytes < 1; });
    if (de.persist_gpu_bytes + de.persist_dram_bytes < 1) return;
    const double gpu_bytes = de.persist_gpu_bytes, dram_bytes = de.persist_dram_bytes;
    de.persist_gpu_bytes = de.persist_dram_bytes = 0;
    c_.run.release(lock);
    const double t0 = now();
    Status st = c_.transport.send(n.gpus[de.gpu], n.bufs[de.gpu], gpu_bytes);  // D2H
    if (st.is_ok()) st = c_.storage.persist(de.node, gpu_bytes + dram_bytes);
    SIM_CHECK(st.is_ok(), "persist on DE {}: {}", de_id, st.message());
    // Coalesce: what becomes pending meanwhile goes out together, one interval after this write began.
    const double rest = t0 + c_.sc.sim.persist_interval_s - now();
    if (rest > 0 && !c_.run.finished()) timed_sleep(c_, rest);
  }
}

}  // namespace sim::engine
