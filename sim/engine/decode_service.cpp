#include "sim/engine/decode_service.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <simgrid/simix.hpp>

#include "sim/core/check.h"
#include "sim/cost/compute_plan.h"
#include "sim/engine/de_buffer.h"
#include "sim/engine/dispatcher.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/timeline.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

DecodeService::DecodeService(EngineContext& ctx)
    : c_(ctx), tokens_per_step_(ctx.sc.engine.tokens_per_step()) {
  // One sharding rule per unit: the GPUs of a decode unit hold the weights (what sizes DE HBM, HbmPool) and
  // each step reads a GPU's share of them. A unit's GPUs step together; a GPU that holds the whole model
  // (a model with params.weight_shards = 1) steps alone. With role changes a unit is its DEs on the nodes
  // that serve decode at some time (membership.h deals joining nodes to the units), its live part stepping.
  for (const auto& [node, gpu] : c_.members.engines(platform::NodeRole::kDecode)) {
    DecodeEngineState de;
    de.id = static_cast<int>(des_.size());
    de.node = node;
    de.gpu = gpu;
    de.cv_loader = sg4::ConditionVariable::create();
    de.cv_persist = sg4::ConditionVariable::create();
    des_.push_back(de);
  }
  const std::vector<int> unit_of = engine_units(c_, platform::NodeRole::kDecode);
  for (auto& de : des_) {
    de.group = unit_of[de.id];
    if (de.group >= static_cast<int>(groups_.size())) groups_.resize(de.group + 1);
    groups_[de.group].des.push_back(de.id);
  }
  for (auto& g : groups_) {
    g.cv = sg4::ConditionVariable::create();
    std::vector<int> unused;
    reshape(g, unused);
    // A node's exchange host crosses every CNIC of the node: a group that spans nodes holds whole nodes.
    SIM_CHECK(g.ep.nodes() == 1 || g.ep.gpus % g.ep.gpus_per_node == 0, "decode EP group of {} GPUs",
              g.ep.gpus);
  }
}

int DecodeService::live_gpus(const DecodeGroupState& g) const {
  int live = 0;
  for (int d : g.des) live += c_.members.serves(des_[d].node, platform::NodeRole::kDecode) ? 1 : 0;
  return std::max(1, live);
}

void DecodeService::reshape(DecodeGroupState& g, std::vector<int>& changed) {
  g.epoch = c_.members.epoch();
  g.ep = cost::ep_group(c_.sc.model, c_.sc.decode_hardware, live_gpus(g));
  g.nodes.clear();
  g.lead = -1;
  for (int d : g.des) {
    const DecodeEngineState& de = des_[d];
    if (!c_.members.serves(de.node, platform::NodeRole::kDecode)) continue;
    if (g.lead < 0) g.lead = d;
    if (g.nodes.empty() || g.nodes.back() != de.node) g.nodes.push_back(de.node);
    if (de.batch > 0) changed.push_back(d);  // its part of a step follows the group's new size
  }
  g.slowest_own_s = 0;
  for (int d : changed) des_[d].own_s = 0;
}

void DecodeService::resize() {
  for (auto& g : groups_) {
    const cost::EpGroup ep = cost::ep_group(c_.sc.model, c_.sc.decode_hardware, live_gpus(g));
    const double per_de = cost::hbm_kv_bytes_per_gpu(c_.sc.model, c_.sc.decode_hardware, ep.gpus);
    for (int d : g.des) c_.hbm.set_per_de(d, per_de);
    g.cv->notify_all();  // a plan in progress is cut and re-planned (the group re-reads its EP group)
  }
}

bool DecodeService::idle(int node) const {
  for (const auto& de : des_)
    if (de.node == node && (c_.loads.de_seq(de.id) > 0 || !de.waiting.empty() || de.persisting ||
                            de.persist_gpu_bytes + de.persist_dram_bytes >= 1))
      return false;
  return true;
}

void DecodeService::forget(RequestId id) {
  const Request& r = c_.requests[id];
  if (!r.de_placed) return;
  auto& w = des_[r.de].waiting;
  w.erase(std::remove(w.begin(), w.end(), id), w.end());
}

double DecodeService::node_down(int node) {
  double lost = 0;
  for (auto& de : des_) {
    if (de.node != node) continue;
    lost += de.persist_gpu_bytes + de.persist_dram_bytes + (de.persisting ? de.persist_sending : 0);
    de.persist_gpu_bytes = de.persist_dram_bytes = 0;
  }
  return lost;
}

void DecodeService::leave_batch(DecodeGroupState& g, const Request& r, std::vector<int>& changed) {
  DecodeEngineState& de = des_[r.de];
  de.batch--;
  de.context_base -= r.hit + r.miss + 1 - r.join_step * tokens_per_step_;
  if (de.batch == 0) de.busy_s += g.step_time_s - de.busy_since;
  g.batch--;
  changed.push_back(de.id);
}

void DecodeService::purge_lost(DecodeGroupState& g, std::vector<int>& changed) {
  g.joins.erase(
      std::remove_if(g.joins.begin(), g.joins.end(), [&](RequestId id) { return c_.requests[id].lost; }),
      g.joins.end());
  using Queue = std::priority_queue<DecodeGroupState::Due, std::vector<DecodeGroupState::Due>,
                                    std::greater<DecodeGroupState::Due>>;
  auto keep = [&](Queue& q, bool in_batch) {
    Queue kept;
    while (!q.empty()) {
      const DecodeGroupState::Due due = q.top();
      q.pop();
      const Request& r = c_.requests[due.id];
      if (!r.lost) {
        kept.push(due);
      } else if (in_batch) {
        leave_batch(g, r, changed);
      }
    }
    q = std::move(kept);
  };
  keep(g.done, true);
  keep(g.blocks, false);
}

void DecodeService::start() {
  for (auto& de : des_) {
    sg4::Host* host = c_.h.nodes[de.node].gpus[de.gpu];
    engine::spawn("de-loader", host, [this, id = de.id]() { loader(id); });
    engine::spawn("de-persist", host, [this, id = de.id]() { persist_loop(id); });
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    const DecodeEngineState& lead = des_[groups_[g].des.front()];
    engine::spawn("de-decode", c_.h.nodes[lead.node].gpus[lead.gpu],
                  [this, g = static_cast<int>(g)]() { group_loop(g); });
  }
}

void DecodeService::wake_all() {
  for (auto& de : des_) {
    de.cv_loader->notify_all();
    de.cv_persist->notify_all();
  }
  for (auto& g : groups_) g.cv->notify_all();
}

void DecodeService::finish() {
  for (auto& de : des_)
    if (de.batch > 0) {
      de.busy_s += groups_[de.group].step_time_s - de.busy_since;
      de.busy_since = groups_[de.group].step_time_s;
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
  // The appended tokens' KV goes to storage from the DE buffer: from DRAM, or from HBM (D2H first).
  const bool hbm = de_buffer_hbm(c_);
  const double append = c_.sc.policy.persist_append ? wire_bytes(r, r.miss * c_.kv_token) : 0;
  if (append > 0) queue_persist(de, hbm ? append : 0, hbm ? 0 : append);
  if (r.gen <= 1) {  // one-token turn: done with its first token
    c_.buffers.release(r, de.node, false);
    const double first = wire_bytes(r, r.gen * c_.kv_token);
    queue_persist(de, hbm ? first : 0, hbm ? 0 : first);
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
  de_hbm_freed(c_, de);  // DE buffer in HBM: reads and batches may now take it
  dispatcher_->de_load_left(de);
  c_.members.poke(des_[de].node);
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
      if (r.t_hbm >= 0) return static_cast<int>(i);  // promised, or allocated early (de_buffer.h)
      return c_.hbm.can_allocate(r, de_id) ? static_cast<int>(i) : -1;  // immediate schedulers: FIFO
    }
    return -1;
  };
  // The bytes of a request's copy into HBM (none with the DE buffer in HBM: its KV is there).
  auto copy_bytes = [&](const Request& r) {
    return de_buffer_hbm(c_) ? 0.0 : wire_bytes(r, (r.hit + r.miss) * c_.kv_token);
  };
  std::vector<RequestId> members;
  while (true) {
    int pick = -1;
    auto lock = c_.run.lock_when(de.cv_loader, [&]() { return (pick = next()) < 0; });
    if (c_.run.finished()) return;
    // The head, then every request the loader would take right after it (the FIFO order, HBM that fits now):
    // with the DE buffer in DRAM their copies into HBM run back to back over the same route, so they go as
    // one transfer, each request joining when the transfer's progress passes its bytes (transport.h). A
    // request with nothing to copy (the free transport) goes alone, as before.
    members.clear();
    double total = 0;
    do {
      const RequestId id = de.waiting[pick];
      de.waiting.erase(de.waiting.begin() + pick);
      Request& r = c_.requests[id];
      if (r.t_hbm < 0) c_.hbm.allocate(r, de_id, now());  // not promised, nor taken for a DE buffer in HBM
      members.push_back(id);
      total += copy_bytes(r);
    } while (total >= 1 && (pick = next()) >= 0 && copy_bytes(c_.requests[de.waiting[pick]]) >= 1);
    control::RunControl::release(lock);
    // DE buffer in DRAM: H2D into the HBM, then the buffer is free.
    const transport::Transport::Handle copy = de_buffer_hbm(c_) ? 0 : c_.transport.start(buf, gpu, total);
    double end = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      Request& r = c_.requests[members[i]];
      if (!de_buffer_hbm(c_)) {
        end += copy_bytes(r);
        const Status st =
            i + 1 < members.size() ? c_.transport.wait_until(copy, end) : c_.transport.wait(copy);
        if (!st.is_ok() && c_.transport.abandoned()) return;  // the stopped run's drain: the loader ends
        SIM_CHECK(st.is_ok() || r.lost, "H2D on DE {}: {}", de_id, st.message());
        if (r.lost) continue;  // its node failed (node_failures.h let its buffer and HBM go)
        c_.buffers.release(r, de.node, false);
      }
      r.t_decode_join = now();
      c_.hbm.joined(r, de_id);
      DecodeGroupState& g = groups_[de.group];
      g.joins.push_back(members[i]);
      g.cv->notify_all();
    }
  }
}

void DecodeService::admit(DecodeGroupState& g, std::vector<int>& changed) {
  const double block = c_.sc.policy.persist_block_tokens;
  for (RequestId id : g.joins) {
    Request& r = c_.requests[id];
    DecodeEngineState& de = des_[r.de];
    r.join_step = g.steps;
    if (de.batch == 0) de.busy_since = g.step_time_s;
    de.batch++;
    de.context_base += r.hit + r.miss + 1 - g.steps * tokens_per_step_;
    de.max_batch = std::max(de.max_batch, de.batch);
    g.batch++;
    // Each step adds the engine's tokens per step (1, or more with MTP: its accepted draft tokens, as an
    // expectation). Its last token comes in the step that reaches gen - 1 tokens past the first (which came
    // from the prefill): ceil((gen - 1) / tokens_per_step) steps from now, a step being indivisible; its k-th
    // full block of generated KV when its tokens reach k blocks, unless the last token comes first.
    g.done.push({g.steps + std::ceil((r.gen - 1) / tokens_per_step_ - 1e-9), g.seq++, id});
    if (block < r.gen) g.blocks.push({g.steps + (block - 1) / tokens_per_step_, g.seq++, id});
    changed.push_back(de.id);
  }
  g.joins.clear();
}

void DecodeService::refresh(DecodeGroupState& g, std::vector<int>& changed) {
  bool rescan = false;
  for (int d : changed) {
    DecodeEngineState& de = des_[d];
    if (de.batch == 0) de.context_base = 0;  // no drift from adding and removing
    const double before = de.own_s;
    de.own_s = cost::decode_own_s(c_.sc.model, c_.sc.decode_hardware, c_.sc.engine, de.batch,
                                  de.context_base + de.batch * g.steps * tokens_per_step_, g.ep);
    if (de.own_s >= g.slowest_own_s) {
      g.slowest_own_s = de.own_s;
    } else if (before >= g.slowest_own_s) {
      rescan = true;  // the slowest got faster: who is the slowest now
    }
  }
  if (rescan) {
    g.slowest_own_s = 0;
    for (int d : g.des) g.slowest_own_s = std::max(g.slowest_own_s, des_[d].own_s);
  }
  changed.clear();
}

void DecodeService::advance(DecodeGroupState& g, double steps, double t_end, std::vector<int>& changed) {
  const double block = c_.sc.policy.persist_block_tokens;
  g.steps += steps;
  const double now_steps = g.steps + 1e-9;
  // Full blocks of generated KV to persistence (notified below, after every change).
  std::vector<int> persist;
  while (!g.blocks.empty() && g.blocks.top().at <= now_steps) {
    const DecodeGroupState::Due due = g.blocks.top();
    g.blocks.pop();
    Request& r = c_.requests[due.id];
    if (r.lost) continue;  // node_failures.h: its KV is gone
    DecodeEngineState& de = des_[r.de];
    de.persist_gpu_bytes += wire_bytes(r, block * c_.kv_token);
    r.persisted_tokens += block;
    persist.push_back(de.id);
    if (r.persisted_tokens + block < r.gen)
      g.blocks.push({due.at + block / tokens_per_step_, g.seq++, due.id});
  }
  std::vector<RequestId> ended;
  while (!g.done.empty() && g.done.top().at <= now_steps) {
    const RequestId id = g.done.top().id;
    g.done.pop();
    Request& r = c_.requests[id];
    if (r.lost) {  // its node failed: it leaves without its last token
      leave_batch(g, r, changed);
      continue;
    }
    DecodeEngineState& de = des_[r.de];
    if (r.gen > r.persisted_tokens)
      de.persist_gpu_bytes += wire_bytes(r, (r.gen - r.persisted_tokens) * c_.kv_token);
    r.persisted_tokens = r.gen;
    leave_batch(g, r, changed);
    persist.push_back(de.id);
    ended.push_back(id);
  }
  // Notifications after the changes: a turn's end issues the agent's next turn (other actors run). The
  // loaders wait for HBM or for their DE to empty: only a turn that ended changes either.
  std::vector<int> loaders;
  for (RequestId id : ended) {
    loaders.push_back(c_.requests[id].de);
    turn_end(id, t_end);
  }
  for (std::vector<int>* des : {&loaders, &persist}) {
    std::sort(des->begin(), des->end());
    des->erase(std::unique(des->begin(), des->end()), des->end());
  }
  for (int d : loaders) des_[d].cv_loader->notify_all();
  for (int d : persist) des_[d].cv_persist->notify_all();
}

void DecodeService::group_loop(int gi) {
  DecodeGroupState& g = groups_[gi];
  std::vector<int> changed;
  std::vector<RequestId> fresh;
  while (true) {
    if (g.epoch != c_.members.epoch()) {  // the group's nodes changed: new flows through the new ones
      stop_exchange(g);
      reshape(g, changed);
      purge_lost(g, changed);
    }
    {
      if (g.batch == 0 && g.joins.empty()) stop_exchange(g);  // an idle group exchanges nothing
      auto lock = c_.run.lock_when(g.cv, [&]() { return g.batch == 0 && g.joins.empty(); });
      if (c_.run.finished()) {  // a stopped run: the flows must not keep the simulation going
        control::RunControl::release(lock);
        stop_exchange(g);
        return;
      }
      // A role change while the group waited idle (its flows were stopped before the wait).
      if (g.epoch != c_.members.epoch()) {
        SIM_CHECK(g.exchange.empty(), "decode group {} reshaped with its exchange running", gi);
        reshape(g, changed);
        purge_lost(g, changed);
      }
      if (g.batch == 0 && g.joins.empty()) {  // its batch was lost with a failed node
        refresh(g, changed);
        continue;
      }
      fresh = g.joins;
      admit(g, changed);
      refresh(g, changed);
    }

    const DecodeEngineState& lead = des_[g.lead];
    sg4::Host* gpu = c_.h.nodes[lead.node].gpus[lead.gpu];
    const double steps_left = g.done.top().at - g.steps;
    const cost::StepPlan step = cost::decode_group_step(c_.sc.model, c_.sc.decode_hardware, c_.sc.engine,
                                                        g.slowest_own_s, g.batch, g.ep);
    const double tau = step.step_s;
    const double t0 = now();
    // The group's EP exchange runs beside its compute at a step's bytes per step (none for a group within
    // one node); the plan ends when the exchange has sent its steps' bytes.
    const double xb = step.exchange_bytes;
    if (xb > 0) pace_exchange(g, steps_left * xb, xb / tau);
    // The plan runs until the group's earliest request is done, unless a join (or the end of the run) cuts
    // it: then the step in progress is finished and the batch re-planned with the newcomers.
    double steps = steps_left;
    if (!g.joins.empty()) {  // a join came while the batch was taken: one step, then re-plan
      steps = 1;
      c_.gpu.run_one(gpu, step.work);
    } else {
      const double work = steps_left * step.work, deadline = t0 + steps_left * tau;
      const simgrid::s4u::ExecPtr plan = c_.gpu.start(gpu, work);
      {
        std::unique_lock<sg4::Mutex> lock(c_.run.mutex());
        if (g.joins.empty() && !c_.run.finished() && g.epoch == c_.members.epoch())
          g.cv->wait_until(lock, deadline);
      }
      const bool cut = now() < deadline - 1e-12;  // woken early: a join, a role change, the end of the run
      if (cut) {
        // The step in progress runs to its end on the plan's execution, which is cut there.
        steps = std::min(steps_left, std::floor((now() - t0) / tau + 1e-9) + 1);
        const double rest = t0 + steps * tau - now();
        if (rest > 0) timed_sleep(c_, rest);
      }
      c_.gpu.finish(plan, work, cut, t0);
    }
    if (xb > 0) catch_up_exchange(g, steps * xb, xb / tau);
    // A congested exchange stretches the steps: they end together with it. A plan waited for (or slept to)
    // its steps' end, so the clock is there; t0 + steps x tau may round an ulp past it, and a turn that ends
    // then must not end after the clock at which the agent's next turn is issued.
    const double planned = t0 + steps * tau;
    const double t_end = planned > now() + 1e-9 ? planned : now(), step_s = (t_end - t0) / steps;
    g.step_time_s += t_end - t0;
    c_.rec.decode_plans++;
    cost::TimeSplit split;  // every GPU of the group, its own part and its wait for the slowest
    for (int d : g.des) split += step.gpu_split(des_[d].own_s);
    c_.rec.decode_time.add(split.scaled(steps), t_end - t0, static_cast<double>(g.des.size()));
    if (c_.timeline != nullptr && steps > 0)
      for (int d : g.des) {
        const DecodeEngineState& de = des_[d];
        if (de.batch == 0) continue;
        c_.timeline->complete(c_.timeline->node_pid(de.node), c_.timeline->engine_tid(de.node, de.gpu),
                              "decode", t0, t_end - t0,
                              {{"batch", static_cast<double>(de.batch)},
                               {"steps", steps},
                               {"step_ms", step_s * 1e3},
                               {"context_tokens", de.context_base + de.batch * g.steps * tokens_per_step_}});
      }
    for (RequestId id : fresh) c_.requests[id].t_second = t0 + step_s;
    advance(g, steps, t_end, changed);
  }
}

void DecodeService::pace_exchange(DecodeGroupState& g, double bytes, double rate) {
  if (!g.exchange.empty() && c_.transport.sent(g.exchange.front()) + bytes > g.exchange_size)
    stop_exchange(g);
  double ahead = 0;  // the bytes every node's flow has sent beyond the steps so far (< 0: behind)
  if (g.exchange.empty()) {
    // SimGrid's CM02 bounds a new comm by the narrowest bandwidth of its route at its start, for good: the
    // pace links are opened to a CNIC's bandwidth first, so that only their constraints pace the flows.
    g.exchange_size = std::max(bytes, kExchangeStreamBytes);
    g.exchange_owed = 0;
    for (int n : g.nodes) {
      const auto& node = c_.h.nodes[n];
      node.exchange_pace->set_bandwidth(c_.sc.decode_hardware.cnic_bw_Bps);
      g.exchange.push_back(c_.transport.start(node.exchange, node.exchange, g.exchange_size,
                                              transport::TrafficClass::kCollective));
    }
    g.exchange_pace = 0;
  } else {
    c_.transport.sent(g.exchange, g.exchange_sent);
    ahead = *std::min_element(g.exchange_sent.begin(), g.exchange_sent.end()) - g.exchange_owed;
  }
  // The pace (engine/decode_service.h): kept while the flows' lead over the steps stays within [0, L] by
  // the plan's end or the horizon, whichever is later, L = pace_band x rate x horizon; else set to what the
  // plan needs, so that they owe nothing by its end. Every change of a pace is a new max-min solve.
  const double h = std::max(kPaceHorizonS, bytes / rate),
               lead_max = c_.sc.sim.pace_band * rate * kPaceHorizonS;
  const double lo = rate - ahead / h, hi = rate + (lead_max - ahead) / h;
  if (g.exchange_pace > 0 && g.exchange_pace >= lo && g.exchange_pace <= hi) return;
  g.exchange_pace = std::max(1e-3 * rate, lo);
  // Every node's pace in one simcall (a link's set_bandwidth called from the kernel runs directly).
  simgrid::kernel::actor::simcall_answered([&]() {
    for (int n : g.nodes) c_.h.nodes[n].exchange_pace->set_bandwidth(g.exchange_pace);
  });
}

void DecodeService::catch_up_exchange(DecodeGroupState& g, double bytes, double rate) {
  g.exchange_owed += bytes;
  // A congested CNIC held a node's exchange back: the group's steps end when every node has caught up,
  // waiting each time for the rest at the rate the flow last had (at first, its pace).
  // Every node's bytes are read in one simcall, then again after each wait.
  std::vector<double>& sent = g.exchange_sent;
  c_.transport.sent(g.exchange, sent);
  for (size_t i = 0; i < g.exchange.size(); ++i) {
    double r = rate;
    // A failed node's flow sends nothing more (node_failures.h): the group goes on without it.
    while (g.exchange_owed - sent[i] > std::max(1.0, 1e-9 * bytes) && !c_.run.finished() &&
           !c_.transport.failed(g.exchange[i])) {
      const double t = now();
      timed_sleep(c_, (g.exchange_owed - sent[i]) / r);
      const double before = sent[i];
      c_.transport.sent(g.exchange, sent);
      if (sent[i] > before && now() > t) r = (sent[i] - before) / (now() - t);
    }
  }
}

void DecodeService::stop_exchange(DecodeGroupState& g) {
  for (auto x : g.exchange) c_.transport.cancel(x);
  g.exchange.clear();
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
    de.persisting = true;
    de.persist_sending = gpu_bytes + dram_bytes;
    control::RunControl::release(lock);
    const double t0 = now();
    Status st = c_.transport.send(n.gpus[de.gpu], n.bufs[de.gpu], gpu_bytes);  // D2H
    if (st.is_ok()) st = c_.storage.persist(de.node, gpu_bytes + dram_bytes);
    if (!st.is_ok() && c_.transport.abandoned()) return;  // the stopped run's drain: the persister ends
    // Only a failure of its node stops a persist (node_failures.h, which counts its bytes as lost).
    SIM_CHECK(st.is_ok() || c_.members.down(de.node), "persist on DE {}: {}", de_id, st.message());
    de.persisting = false;
    c_.members.poke(de.node);
    // Coalesce: what becomes pending meanwhile goes out together, one interval after this write began.
    const double rest = t0 + c_.sc.sim.persist_interval_s - now();
    if (rest > 0 && !c_.run.finished()) timed_sleep(c_, rest);
  }
}

}  // namespace sim::engine
