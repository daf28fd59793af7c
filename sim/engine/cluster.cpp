#include "sim/engine/cluster.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/interrupt.h"
#include "sim/engine/sg_compat.h"
#include "sim/policy/dualpath/thresholds.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

Cluster::Cluster(const config::ScenarioConfig& sc, const platform::PlatformHandles& h,
                 const std::vector<workload::Agent>& agents,
                 std::unique_ptr<policy::SchedulerPolicy> scheduler,
                 std::unique_ptr<policy::ReadPathPolicy> read_path, Recorder* recorder,
                 metrics::LinkStats* links)
    : sc_(sc),
      h_(h),
      agents_(agents),
      scheduler_(std::move(scheduler)),
      read_path_(std::move(read_path)),
      rec_(recorder),
      links_(links) {
  const auto& m = sc.model;
  kv_token_ = cost::kv_bytes_per_token(m);
  kv_token_layer_ = cost::kv_bytes_per_token_layer(m);
  const int g_all = h.gpus_per_node;
  pe_hbm_kv_ =
      cost::hbm_kv_bytes_per_gpu(m, sc.hardware, cost::weight_shards_for_role(m, h.prefill_nodes * g_all));
  de_hbm_kv_ =
      cost::hbm_kv_bytes_per_gpu(m, sc.hardware, cost::weight_shards_for_role(m, h.decode_nodes * g_all));
  mutex_ = sg4::Mutex::create();
  cv_done_ = sg4::ConditionVariable::create();
  const int g = h.gpus_per_node;
  for (int n = 0; n < h.prefill_nodes + h.decode_nodes; ++n) {
    NodeState ns;
    ns.id = n;
    ns.cv = sg4::ConditionVariable::create();
    nodes_.push_back(ns);
    for (int j = 0; j < g; ++j) {
      if (n < h.prefill_nodes) {
        PrefillEngineState pe;
        pe.id = static_cast<int>(pes_.size());
        pe.node = n;
        pe.gpu = j;
        pe.cv = sg4::ConditionVariable::create();
        pes_.push_back(pe);
      } else {
        DecodeEngineState de;
        de.id = static_cast<int>(des_.size());
        de.node = n;
        de.gpu = j;
        de.cv_loader = sg4::ConditionVariable::create();
        de.cv_decode = sg4::ConditionVariable::create();
        de.cv_persist = sg4::ConditionVariable::create();
        des_.push_back(de);
      }
    }
  }
  // DP-attention groups: an EP model's PEs run their passes in groups of prefill_dp_group_gpus
  // consecutive GPUs (node-major numbering: a group of g fills one node); other models alone.
  const int group_gpus = m.weight_shards > 1 ? sc.cluster.prefill_dp_group_gpus : 1;
  for (auto& pe : pes_) {
    pe.pass_group = pe.id / group_gpus;
    if (pe.pass_group >= static_cast<int>(pass_groups_.size())) pass_groups_.resize(pe.pass_group + 1);
    pass_groups_[pe.pass_group].push_back(pe.id);
    pe.cv = pes_[pass_groups_[pe.pass_group].front()].cv;
  }
  // Scheduling groups (DualPath §6.1: all engines of a node are in one group). PE groups: runs of
  // policy.pe_group_nodes prefill nodes (0 = one group of every PE, as in the paper's Fig. 5, where one
  // group spans two nodes: Algorithm 1 can then prefer the engines of nodes with short read queues).
  // DE groups: one per decode node (phase 1 balances tokens across them).
  const int pe_span = sc.policy.pe_group_nodes > 0 ? sc.policy.pe_group_nodes : h.prefill_nodes;
  for (int n = 0; n < h.prefill_nodes; ++n) pe_group_of_node_.push_back(n / pe_span);
  pe_sched_groups_.resize(pe_group_of_node_.back() + 1);
  de_sched_groups_.resize(h.decode_nodes);
  for (const auto& pe : pes_) pe_sched_groups_[pe_group_of_node_[pe.node]].push_back(pe.id);
  for (const auto& de : des_) de_sched_groups_[de.node - h.prefill_nodes].push_back(de.id);
  de_private_.resize(h.decode_nodes);
  de_private_tok_.assign(h.decode_nodes, 0.0);
  pe_dirty_.assign(pe_sched_groups_.size(), 0);
  de_dirty_.assign(h.decode_nodes, 0);
  for (size_t i = 0; i < pe_sched_groups_.size(); ++i)
    pe_fetch_cv_.push_back(sg4::ConditionVariable::create());
  for (int i = 0; i < h.decode_nodes; ++i) de_fetch_cv_.push_back(sg4::ConditionVariable::create());
  policy::SchedulerContext ctx;
  ctx.alpha_tokens = policy::dualpath::resolve_threshold(sc.policy.alpha_tokens,
                                                         policy::dualpath::alpha_tokens(sc.hardware, m));
  ctx.beta_tokens = policy::dualpath::resolve_threshold(sc.policy.beta_tokens,
                                                        policy::dualpath::beta_tokens(sc.hardware, m));
  ctx.kv_bytes_per_token = kv_token_;
  scheduler_->configure(ctx);
  for (const auto& pe : pes_) view_.pes.push_back({pe.id, pe.node, 0, 0, 0});
  for (const auto& de : des_) view_.des.push_back({de.id, de.node, 0, 0, de_hbm_kv_});
  view_.read_q.assign(nodes_.size(), 0.0);
  next_turn_.assign(agents.size(), 0);
  context_.assign(agents.size(), 0.0);
  agents_left_ = static_cast<int>(agents.size());
}

void Cluster::finish() {
  finished_ = true;
  // The fetchers are daemons: woken here, they return on their own instead of being killed inside a
  // wait at the end of the run (whose unwinding would release the cluster mutex in a simcall).
  for (auto& cv : pe_fetch_cv_) cv->notify_all();
  for (auto& cv : de_fetch_cv_) cv->notify_all();
  for (auto& n : nodes_) n.cv->notify_all();
  for (auto& pe : pes_) pe.cv->notify_all();
  for (auto& de : des_) {
    de.cv_loader->notify_all();
    de.cv_decode->notify_all();
    de.cv_persist->notify_all();
  }
}

void Cluster::start() {
  for (auto& n : nodes_)
    for (int l = 0; l < sc_.sim.read_depth; ++l)
      engine::spawn("reader", h_.nodes[n.id].storage, [this, id = n.id]() { read_lane(id); });
  for (int g = 0; g < static_cast<int>(pass_groups_.size()); ++g) {
    const auto& pe = pes_[pass_groups_[g].front()];
    engine::spawn("pe", h_.nodes[pe.node].gpus[pe.gpu], [this, g]() { prefill_loop(g); });
  }
  if (scheduler_->queued()) {
    for (int g = 0; g < static_cast<int>(pe_sched_groups_.size()); ++g)
      engine::spawn_daemon("pe-fetch", h_.nodes[pes_[pe_sched_groups_[g].front()].node].dram,
                           [this, g]() { pe_fetcher(g); });
    for (int g = 0; g < static_cast<int>(de_sched_groups_.size()); ++g)
      engine::spawn_daemon("de-fetch", h_.nodes[h_.prefill_nodes + g].dram, [this, g]() { de_fetcher(g); });
  }
  for (auto& de : des_) {
    sg4::Host* host = h_.nodes[de.node].gpus[de.gpu];
    engine::spawn("de-loader", host, [this, id = de.id]() { decode_loader(id); });
    engine::spawn("de-decode", host, [this, id = de.id]() { decode_loop(id); });
    engine::spawn("de-persist", host, [this, id = de.id]() { persist_loop(id); });
  }
  // sim.time_limit_s: stop the run there (the results say so and are marked incomplete).
  if (sc_.sim.time_limit_s > 0) {
    engine::spawn_daemon("time-limit", h_.nodes.front().dram, [this]() {
      engine::sleep_for(sc_.sim.time_limit_s);
      if (agents_left_ > 0 && !finished_) {
        timed_out_ = true;
        stop("time_limit");
      }
    });
  }
  // Watchdog (interrupt.h). SIGINT / SIGTERM: stop at the next check; the results so far are then
  // written. A stall (requests in flight, yet no transfer, timed activity or turn for kStallTimeoutS of
  // simulated time: a deadlock) stops the run as "stall" instead of letting the daemons tick forever.
  engine::spawn_daemon("watchdog", h_.nodes.front().dram, [this]() {
    uint64_t last_work = 0;
    double last_change = 0;
    while (!finished_) {
      if (stop_signal() != 0) {
        stop(stop_signal_name());
        return;
      }
      const uint64_t work = links_->transfers() + static_cast<uint64_t>(rec_->timed_activities) +
                            static_cast<uint64_t>(rec_->turns_completed);
      if (work != last_work || table_.in_flight() == 0) {
        last_work = work;
        last_change = engine::now();
      } else if (engine::now() - last_change >= kStallTimeoutS) {
        stop("stall");
        return;
      }
      engine::sleep_for(kInterruptCheckS);
    }
  });
  if (sc_.workload.mode == "online")
    engine::spawn_daemon("online-monitor", h_.nodes.front().dram, [this]() { monitor_loop(); });
  engine::spawn("driver", h_.nodes.front().dram, [this]() { driver_loop(); });
}

double Cluster::de_hbm_held_bytes() const {
  double held = 0;
  for (const auto& d : view_.des) held += de_hbm_kv_ - d.free_hbm;
  return held;
}

double Cluster::dram_buffer_held_bytes() const {
  double held = 0;
  for (const auto& n : nodes_) held += n.buffer_used;
  return held;
}

double Cluster::engine_now() {
  return engine::now();
}

void Cluster::issue_turn(int agent) {
  if (finished_) return;
  const int k = next_turn_[agent];
  Request r;
  r.agent = agent;
  r.turn = k;
  if (replay_.empty()) {
    const workload::Turn t = agents_[agent].turn(k);
    r.hit = context_[agent];
    r.miss = t.append;
    r.gen = std::max(1, t.gen);
    context_[agent] += t.append + t.gen;
  } else {
    const ReplayTurn& t = replay_[agent][k];
    r.hit = t.hit;
    r.miss = t.miss;
    r.gen = t.gen;
  }
  r.t_issue = engine::now();
  waiting_first_++;
  waiting_first_issue_sum_ += r.t_issue;
  const RequestId id = table_.add(r);
  rec_->peak_in_flight = std::max(rec_->peak_in_flight, table_.in_flight());
  if (scheduler_->queued()) {
    pe_queue_.push_back(id);
    for (int g = 0; g < static_cast<int>(pe_sched_groups_.size()); ++g) mark_pe_group(g);
    return;
  }
  const policy::Placement p = scheduler_->place(info(id), view());
  SIM_CHECK(
      p.pe >= 0 && p.pe < static_cast<int>(pes_.size()) && p.de >= 0 && p.de < static_cast<int>(des_.size()),
      "scheduler placed a request on PE {} / DE {}", p.pe, p.de);
  assign(id, p.pe, p.de);
  start_reads(id);
}

policy::RequestInfo Cluster::info(RequestId id) const {
  const Request& r = table_[id];
  return {id, r.hit, r.miss, r.gen};
}

void Cluster::assign(RequestId id, int pe_id, int de_id) {
  Request& r = table_[id];
  r.pe = pe_id;
  r.de = de_id;
  pe_load(pe_id).seq++;
  pe_load(pe_id).tok += r.hit + r.miss;
  de_load(de_id).seq++;
  de_load(de_id).tok += r.hit + r.miss + r.gen;
}

void Cluster::start_reads(RequestId id) {
  Request& q = table_[id];
  const policy::ClusterView& v = view();
  const policy::ReadDecision d = read_path_->choose(info(id), v.pes[q.pe], v.des[q.de], v);
  q.pe_fraction = d.pe_fraction;
  q.zero_cost = d.zero_cost;
  const PrefillEngineState& pe = pes_[q.pe];
  const DecodeEngineState& de = des_[q.de];
  if (q.zero_cost || q.hit <= 0) {
    mark_ready(id);
    return;
  }
  const std::pair<int, double> sides[2] = {{pe.node, q.pe_fraction}, {de.node, 1 - q.pe_fraction}};
  const bool split = q.pe_fraction > 0 && q.pe_fraction < 1;
  // State first, notifications last: a notify is a simcall, and the lanes it wakes read this request.
  int queued[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    const auto [node, share] = sides[i];
    if (share <= 0) continue;
    q.reads_pending++;
    read_q(node) += share * q.hit;  // both sides count as queued from now on (the policies' view)
    if (split && node == de.node) {
      // Deadlock avoidance: a split request takes its PE buffer space before its DE reservation (see
      // request.h), as every other request does (PE-path reads reserve on the DE side at batch time).
      q.deferred_de_bytes = share * q.hit * kv_token_;
      continue;
    }
    nodes_[node].read_queue.emplace_back(id, share * q.hit * kv_token_);
    queued[i] = node;
  }
  for (int node : queued)
    if (node >= 0) nodes_[node].cv->notify_all();
}

void Cluster::on_read_done(RequestId id, int node, double bytes, double tokens) {
  Request& r = table_[id];
  read_q(node) -= tokens;
  rec_->hit_bytes_read += bytes;
  if (--r.reads_pending == 0) mark_ready(id);
}

void Cluster::mark_ready(RequestId id) {
  Request& r = table_[id];
  r.t_ready = engine::now();
  PrefillEngineState& pe = pes_[r.pe];
  pe.ready.push_back(id);
  pe.cv->notify_all();
}

void Cluster::free_buffer(int node, double bytes) {
  if (bytes <= 0) return;
  NodeState& n = nodes_[node];
  n.buffer_used -= bytes;
  if (n.buffer_used < 1e-6 * bytes) n.buffer_used = std::max(0.0, n.buffer_used);
  // Notifying is a simcall (other actors run meanwhile), so take the waiting list out first.
  std::vector<int> waiting;
  waiting.swap(n.waiting_pes);
  n.cv->notify_all();
  for (int pe : waiting) pes_[pe].cv->notify_all();
}

bool Cluster::de_buffer_fits(RequestId id) const {
  const Request& r = table_[id];
  if (r.zero_cost || r.de_buf_bytes > 0) return true;
  const NodeState& n = nodes_[des_[r.de].node];
  return n.buffer_used <= 0 || n.buffer_used + (r.hit + r.miss) * kv_token_ <= sc_.cluster.dram_buffer_bytes;
}

bool Cluster::reserve_de_buffer(RequestId id) {
  Request& r = table_[id];
  if (r.zero_cost || r.de_buf_bytes > 0) return true;
  if (!de_buffer_fits(id)) return false;
  NodeState& n = nodes_[des_[r.de].node];
  const double need = (r.hit + r.miss) * kv_token_;
  n.buffer_used += need;
  n.buffer_peak = std::max(n.buffer_peak, n.buffer_used);
  r.de_buf_bytes = need;
  return true;
}

void Cluster::queue_persist(DecodeEngineState& de, double gpu_bytes, double dram_bytes) {
  de.persist_gpu_bytes += gpu_bytes;
  de.persist_dram_bytes += dram_bytes;
  if (gpu_bytes + dram_bytes > 0) de.cv_persist->notify_all();
}

void Cluster::on_prefill_done(RequestId id) {
  Request& r = table_[id];
  r.t_first = engine::now();
  waiting_first_--;
  waiting_first_issue_sum_ -= r.t_issue;
  if (sc_.workload.mode == "online")
    first_tokens_.emplace_back(r.t_first, static_cast<float>(r.t_first - r.t_issue));
  PrefillEngineState& pe = pes_[r.pe];
  pe_load(r.pe).seq--;
  pe_load(r.pe).tok -= r.hit + r.miss;
  if (scheduler_->queued()) mark_pe_group(pe_group_of_node_[pe.node]);
  free_buffer(pe.node, r.pe_buf_bytes);
  r.pe_buf_bytes = 0;
  DecodeEngineState& de = des_[r.de];
  // The DE buffer now holds the whole prompt KV (hit via either path, miss pushed by the PE).
  // (Its space was reserved before the first byte arrived: see reserve_de_buffer.)
  if (!r.zero_cost && sc_.policy.persist_append) queue_persist(de, 0, r.miss * kv_token_);
  if (r.gen <= 1) {  // one-token turn: done with its first token
    free_buffer(de.node, r.de_buf_bytes);
    r.de_buf_bytes = 0;
    if (!r.zero_cost) queue_persist(de, 0, r.gen * kv_token_);
    on_turn_done(id, r.t_first);
    de.cv_loader->notify_all();  // a whole-DE claim may be waiting for the DE's other requests to end
    return;
  }
  de.waiting.push_back(id);
  de.cv_loader->notify_all();
}

void Cluster::on_turn_done(RequestId id, double t_done) {
  Request& r = table_[id];
  r.t_done = t_done;
  DecodeEngineState& de = des_[r.de];
  de_load(r.de).seq--;
  de_load(r.de).tok -= r.hit + r.miss + r.gen;
  // The DE HBM the request held, or was promised by a queued scheduler: a one-token turn ends at its
  // prefill and never reaches the decode batch, yet its DE fetch promised HBM for it.
  if (r.t_hbm >= 0) {  // HBM byte-seconds before the turn joined the decode batch, and in it
    const double join = r.t_decode_join >= 0 ? r.t_decode_join : t_done;
    rec_->hbm_waiting_byte_s += r.hbm_bytes * (join - r.t_hbm);
    rec_->hbm_decoding_byte_s += r.hbm_bytes * (t_done - join);
  }
  de_load(r.de).free_hbm += r.hbm_bytes;
  r.hbm_bytes = 0;
  if (r.hbm_whole_de) de.whole_claimed = false;
  if (scheduler_->queued()) mark_de_group(de.node - h_.prefill_nodes);
  TurnSample s;
  s.ttft = static_cast<float>(r.t_first - r.t_issue);
  if (r.gen > 1) {
    s.ttst = static_cast<float>(r.t_second - r.t_issue);
    // TPOT: the time per token once decoding runs (from the second token on); the gap between the first
    // and the second token (HBM allocation, H2D) is in TTST. A two-token turn has only that gap.
    s.tpot = static_cast<float>(r.gen > 2 ? (r.t_done - r.t_second) / (r.gen - 2) : r.t_second - r.t_first);
    s.alloc = static_cast<float>(r.t_decode_join - r.t_first);
  }
  s.read = static_cast<float>(r.read_s);
  s.queue = static_cast<float>(std::max(0.0, r.t_ready - r.t_issue - r.read_s));
  s.prefill = static_cast<float>(r.t_first - r.t_ready);
  rec_->turns.push_back(s);
  rec_->turns_completed++;
  rec_->prompt_tokens += r.hit + r.miss;
  rec_->miss_tokens += r.miss;
  rec_->gen_tokens += r.gen;
  rec_->last_done = std::max(rec_->last_done, t_done);
  const int agent = r.agent;
  table_.release(id);
  next_turn_[agent]++;
  if (!replay_.empty() && next_turn_[agent] < num_turns(agent)) {
    // Open loop per session: the next request at its trace arrival, or now when this one ended later.
    const double at = replay_[agent][next_turn_[agent]].arrival_s;
    if (at > engine::now()) {
      release_at(at, agent);
    } else {
      issue_turn(agent);
    }
  } else if (next_turn_[agent] < num_turns(agent)) {
    const double think = agents_[agent].turn(next_turn_[agent]).think_s;
    if (think > 0) {
      engine::spawn_daemon("think", h_.nodes.front().dram, [this, agent, think]() {
        engine::sleep_for(think);
        issue_turn(agent);
      });
    } else {
      issue_turn(agent);
    }
  } else if (--agents_left_ == 0) {
    cv_done_->notify_all();
  }
}

}  // namespace sim::engine
