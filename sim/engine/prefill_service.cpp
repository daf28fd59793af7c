#include "sim/engine/prefill_service.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/cost/batch_quota.h"
#include "sim/cost/compute_plan.h"
#include "sim/engine/de_buffer.h"
#include "sim/engine/decode_service.h"
#include "sim/engine/dispatcher.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/timeline.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

namespace {

// outputs.timeline: one "prefill" event per GPU of the group that had work in the pass, with the quota's
// measure of its batch (its predicted attention over policy.quota_scope) and whether it ends in a cut
// request.
void trace_pass(metrics::Timeline& tl, const PrefillEngineState& pe, size_t requests,
                const std::vector<cost::Chunk>& chunks, double busy_s, double quota_measure_s, bool cut,
                double t0, double t1) {
  if (requests == 0) return;
  double tokens = 0, cached = 0;
  for (const auto& c : chunks) {
    tokens += c.bsz;
    cached += c.cached;
  }
  tl.complete(tl.node_pid(pe.node), tl.engine_tid(pe.node, pe.gpu), "prefill", t0, t1 - t0,
              {{"requests", static_cast<double>(requests)},
               {"tokens", tokens},
               {"cached_tokens", cached},
               {"compute_s", busy_s},
               {"quota_measure_s", quota_measure_s},
               {"cut", cut ? 1.0 : 0.0}});
}

// The pass's compute on the group's GPUs: layers of the plan's per-GPU work, one execution per GPU.
class GroupCompute : public PassCompute {
 public:
  GroupCompute(GpuCompute& gpu, const std::vector<sg4::Host*>& hosts, const cost::PassPlan& plan,
               std::vector<double>& work, std::vector<double>& busy)
      : gpu_(gpu), hosts_(hosts), plan_(plan), work_(work), busy_(busy) {}
  void run(double layers) override {
    size(layers);
    gpu_.run(hosts_, work_, busy_);
  }
  void start(double layers) override {
    size(layers);
    gpu_.start_all(hosts_, work_, running_);
  }
  void wait() override { gpu_.wait_all(running_, hosts_, work_, busy_); }

 private:
  void size(double layers) {
    for (size_t i = 0; i < hosts_.size(); ++i) work_[i] = plan_.layer_work[i] * layers;
  }
  GpuCompute& gpu_;
  const std::vector<sg4::Host*>& hosts_;
  const cost::PassPlan& plan_;
  std::vector<double>& work_;
  std::vector<double>& busy_;
  std::vector<sg4::ExecPtr> running_;
};

}  // namespace

PrefillService::PrefillService(EngineContext& ctx)
    : c_(ctx), pipeline_(ctx.sc.policy.layerwise, ctx.sc.sim.layer_group) {
  for (const auto& [node, gpu] : c_.members.engines(platform::NodeRole::kPrefill)) {
    PrefillEngineState pe;
    pe.id = static_cast<int>(pes_.size());
    pe.node = node;
    pe.gpu = gpu;
    pes_.push_back(pe);
  }
  // Units (config/units.h) and DP-attention groups: an EP model's PEs run their passes in groups of
  // prefill_dp_group_gpus consecutive GPUs of their unit (node-major numbering: a group of g fills one node;
  // 0 = the whole unit: with role changes, of every node that serves prefill at some time in the unit, the
  // group's live part passing); a dense model's unit is one GPU, or a tensor-parallel group.
  const std::vector<int> unit_of = engine_units(c_, platform::NodeRole::kPrefill);
  int units = 0;
  for (auto& pe : pes_) {
    pe.unit = unit_of[pe.id];
    units = std::max(units, pe.unit + 1);
  }
  std::vector<std::vector<int>> unit_pes(units);
  for (const auto& pe : pes_) unit_pes[pe.unit].push_back(pe.id);
  // A dense model's unit of several GPUs shards its weights (tensor parallel): its group's passes share
  // every chunk over the group's GPUs (cost::prefill_pass).
  const int dp = c_.sc.cluster.prefill_dp_group_gpus;
  for (const auto& members : unit_pes) {
    const size_t size = dp == 0 ? members.size() : static_cast<size_t>(dp);
    for (size_t i = 0; i < members.size(); ++i) {
      if (i % size == 0) pass_groups_.emplace_back();
      pass_groups_.back().push_back(members[i]);
      pes_[members[i]].pass_group = static_cast<int>(pass_groups_.size()) - 1;
    }
  }
  for (auto& g : pass_groups_) {
    auto cv = sg4::ConditionVariable::create();
    for (int p : g) pes_[p].cv = cv;
  }
  c_.buffers.set_pe_waker([this](int pe) { pes_[pe].cv->notify_all(); });
  in_pass_.assign(c_.h.nodes.size(), 0);
  cost::BatchLimits limits = cost::batch_limits(c_.sc.policy, c_.sc.engine, c_.sc.model);
  // HBM per token that must be resident: every layer (Basic), or two layers (layerwise: the layer
  // computing and the next one loading), whatever the simulation's granularity.
  limits.hbm_bytes_per_token = c_.sc.policy.layerwise ? 2 * c_.kv_token_layer : c_.kv_token;
  unit_ep_.resize(units);
  unit_limits_.assign(units, limits);
  resize();
}

void PrefillService::resize() {
  // A unit's EP group is its live GPUs: they share the experts (the weights per GPU, hence the HBM left for
  // KV, and each GPU's part of the routed work). A unit that lost a node spreads its weights over the GPUs
  // left; one that gained a node over more.
  std::vector<int> live(unit_ep_.size(), 0);
  for (const auto& pe : pes_)
    live[pe.unit] += c_.members.serves(pe.node, platform::NodeRole::kPrefill) ? 1 : 0;
  for (size_t u = 0; u < unit_ep_.size(); ++u) {
    unit_ep_[u] = cost::ep_group(c_.sc.model, c_.sc.prefill_hardware, std::max(1, live[u]));
    unit_limits_[u].hbm_bytes =
        cost::hbm_kv_bytes_per_gpu(c_.sc.model, c_.sc.prefill_hardware, unit_ep_[u].gpus);
  }
}

bool PrefillService::holds_nothing(int node) const {
  for (const auto& pe : pes_)
    if (pe.node == node && (c_.loads.view().pes[pe.id].seq > 0 || !pe.ready.empty())) return false;
  return true;
}

bool PrefillService::idle(int node) const {
  // Its GPUs may still be in a pass of their group: they leave it at the pass's end.
  return in_pass_[node] == 0 && holds_nothing(node);
}

void PrefillService::start() {
  for (int g = 0; g < static_cast<int>(pass_groups_.size()); ++g) {
    const auto& pe = pes_[pass_groups_[g].front()];
    engine::spawn("pe", c_.h.nodes[pe.node].gpus[pe.gpu], [this, g]() { pass_loop(g); });
  }
}

void PrefillService::wake_all() {
  for (const auto& g : pass_groups_) pes_[g.front()].cv->notify_all();
}

void PrefillService::ready(RequestId id) {
  Request& r = c_.requests[id];
  r.t_ready = now();
  // Its storage reads are done (or there were none): storage may evict the prefix again.
  c_.stored.unpin(r.agent, r.t_ready);
  PrefillEngineState& pe = pes_[r.pe];
  pe.ready.push_back(id);
  pe.cv->notify_all();
}

bool PrefillService::has_work(const PrefillEngineState& pe) const {
  for (RequestId id : pe.ready) {
    if (de_space_fits(c_, c_.requests[id])) return true;
  }
  return false;
}

// pe's batch for the next pass (FIFO; requests whose DE-side space does not fit keep their place).
PrefillService::BatchForm PrefillService::form_batch(PrefillEngineState& pe, std::vector<PassItem>& batch,
                                                     std::vector<cost::Chunk>& chunks) {
  cost::QuotaBatchFormer former(c_.sc.model, c_.sc.prefill_hardware, c_.sc.engine, unit_limits_[pe.unit]);
  BatchForm form;
  std::vector<RequestId> skipped;
  while (!pe.ready.empty() && !former.closed()) {
    const RequestId id = pe.ready.front();
    Request& r = c_.requests[id];
    if (!take_de_space(c_, r)) {
      skipped.push_back(id);
      pe.ready.pop_front();
      continue;
    }
    const cost::Chunk c{r.hit + r.prefilled, r.miss - r.prefilled};
    const auto offer = former.offer(c);
    if (offer.verdict == cost::QuotaBatchFormer::Verdict::kRejected) break;
    batch.push_back({id, {c.cached, offer.bsz}, r.hit_pushed});
    form.cut = offer.verdict == cost::QuotaBatchFormer::Verdict::kChunked;
    pe.ready.pop_front();
  }
  pe.ready.insert(pe.ready.begin(), skipped.begin(), skipped.end());
  chunks = former.chunks();
  form.bound = former.closed_by();
  form.predicted_s = former.predicted_s();
  return form;
}

void PrefillService::record_pass(const cost::PassPlan& plan, const std::vector<BatchForm>& forms,
                                 double wall_s) {
  PassStats& s = c_.rec.prefill_passes;
  const size_t n = forms.size();
  s.passes++;
  s.gpus += static_cast<double>(n);
  s.wall_s += wall_s;
  s.tokens += plan.tokens;
  double own_sum = 0;
  bool cut = false;
  for (size_t i = 0; i < n; ++i) {
    own_sum += plan.own_s[i];
    cut = cut || forms[i].cut;
    if (plan.own_s[i] <= 0) continue;  // no new token: no batch
    s.gpus_with_work++;
    s.batches++;
    s.predicted_s += forms[i].predicted_s;
    s.attention_s += plan.attention_s[i] * plan.layers;
    s.closed_by_quota += forms[i].bound == cost::BatchBound::kQuota ? 1 : 0;
    s.closed_by_tokens += forms[i].bound == cost::BatchBound::kTokens ? 1 : 0;
    s.closed_by_hbm += forms[i].bound == cost::BatchBound::kHbm ? 1 : 0;
  }
  if (own_sum > 0) s.slowest_over_mean += plan.own_s[plan.slowest] * static_cast<double>(n) / own_sum;
  s.passes_with_cut += cut ? 1 : 0;
  const bool slowest_cut = forms[plan.slowest].cut;
  s.passes_slowest_cut += slowest_cut ? 1 : 0;
  c_.rec.prefill_time.waits += cost::pass_wait_causes(plan, slowest_cut);
}

void PrefillService::plan_transfers(const PrefillEngineState& pe, const std::vector<PassItem>& batch,
                                    Flows& load, Flows& push) {
  sg4::Host* gpu = c_.h.nodes[pe.node].gpus[pe.gpu];
  sg4::Host* own_buf = c_.h.nodes[pe.node].bufs[pe.gpu];
  for (const auto& it : batch) {
    Request& r = c_.requests[it.id];
    const auto& de = decode_->engine(r.de);
    sg4::Host* de_buf = de_side_host(c_, de.node, de.gpu);  // the DE buffer: DRAM, or the DE GPU's HBM
    // The cached tokens' KV: the hit from the buffers it was read into (the PE fraction in the PE buffer,
    // the rest in the DE buffer), and an earlier chunk's computed KV from the DE buffer, where that
    // chunk's pass pushed it.
    const double f = r.pe_fraction, earlier_chunks = it.chunk.cached - r.hit;
    load[{own_buf, gpu}] += wire_bytes(r, f * r.hit * c_.kv_token_layer);
    load[{de_buf, gpu}] += wire_bytes(r, ((1 - f) * r.hit + earlier_chunks) * c_.kv_token_layer);
    // PE path: the hit KV goes on to the DE buffer once; every computed token's KV goes there too.
    const double pushed_hit = r.hit_pushed ? 0 : f * r.hit;
    push[{gpu, de_buf}] += wire_bytes(r, (pushed_hit + it.chunk.bsz) * c_.kv_token_layer);
    c_.rec.hit_bytes_loaded += r.hit_pushed ? 0 : wire_bytes(r, r.hit * c_.kv_token);
    r.hit_pushed = true;
  }
}

void PrefillService::pass_loop(int group) {
  const std::vector<int>& all = pass_groups_[group];
  const auto& m = c_.sc.model;
  // The group's PEs in this pass: those of the nodes that serve prefill now (all of them without role
  // changes), but for a draining node that holds no request any more: it leaves the group at the end of
  // the pass it was in, and may then switch (control/role_changes.h).
  std::vector<int> members, want;
  size_t n = 0;
  std::vector<std::vector<PassItem>> batches;
  std::vector<std::vector<cost::Chunk>> chunks;
  std::vector<BatchForm> forms;
  std::vector<sg4::Host*> hosts;
  std::vector<double> work, busy;
  // The pass's EP exchange endpoints: every GPU of a pass exchanges the same bytes at the same pace, so a
  // group of whole nodes sends one flow per node (through all of its CNICs), any other group one per GPU.
  std::vector<sg4::Host*> exchange_ends;
  std::vector<int> pass_nodes;  // the nodes of `members`
  uint64_t epoch = ~uint64_t{0};
  auto in_pass = [&](std::vector<int>& out) {
    out.clear();
    for (int p : all) {
      const int node = pes_[p].node;
      if (!c_.members.serves(node, platform::NodeRole::kPrefill)) continue;
      if (c_.members.draining(node) && holds_nothing(node)) continue;
      out.push_back(p);
    }
  };
  auto refresh_members = [&]() {
    epoch = c_.members.epoch();
    members.swap(want);
    hosts.clear();
    exchange_ends.clear();
    n = members.size();
    batches.assign(n, {});
    chunks.assign(n, {});
    forms.assign(n, {});
    work.assign(n, 0.0);
    busy.assign(n, 0.0);
    pass_nodes.clear();
    for (int p : members) {
      hosts.push_back(c_.h.nodes[pes_[p].node].gpus[pes_[p].gpu]);
      if (pass_nodes.empty() || pass_nodes.back() != pes_[p].node) pass_nodes.push_back(pes_[p].node);
    }
    const int per_node = n > 0 ? c_.h.gpus_on(pes_[members[0]].node) : 1;
    if (n > 0 && n % per_node == 0 && pes_[members[0]].gpu == 0) {
      for (size_t i = 0; i < n; i += per_node)
        exchange_ends.push_back(c_.h.nodes[pes_[members[i]].node].exchange);
    } else {
      exchange_ends = hosts;
    }
  };
  while (true) {
    // Blocked while no GPU of the group has a request ready whose DE buffer has room (then each PE
    // registers with the decode nodes it waits for, which wake it when they free space).
    auto lock = c_.run.lock_when(pes_[all[0]].cv, [&]() {
      for (int p : all)
        if (has_work(pes_[p])) return false;
      for (int p : all)
        for (RequestId id : pes_[p].ready) c_.buffers.wait_for_room(c_.loads.de_node(c_.requests[id].de), p);
      return true;
    });
    if (c_.run.finished()) return;
    if (epoch != c_.members.epoch() || c_.members.dynamic()) {
      in_pass(want);
      if (epoch != c_.members.epoch() || want != members) refresh_members();
    }
    for (size_t i = 0; i < n; ++i) {
      batches[i].clear();
      forms[i] = form_batch(pes_[members[i]], batches[i], chunks[i]);
    }
    control::RunControl::release(lock);

    const double now0 = now();
    const cost::PassPlan plan =
        cost::prefill_pass(m, c_.sc.prefill_hardware, c_.sc.engine, chunks, unit_ep_[pes_[all[0]].unit]);
    double sum_attention = 0, max_attention = 0;
    for (size_t i = 0; i < n; ++i) {
      sum_attention += plan.attention_s[i];
      max_attention = std::max(max_attention, plan.attention_s[i]);
      for (const auto& it : batches[i])
        if (c_.requests[it.id].t_prefill_start < 0) c_.requests[it.id].t_prefill_start = now0;
    }
    if (n > 1 && sum_attention > 0)
      c_.rec.attention_balance.push_back({now0, max_attention * n / sum_attention});

    Flows load, push, exchange;
    for (size_t i = 0; i < n; ++i) plan_transfers(pes_[members[i]], batches[i], load, push);
    // An EP group over more than one node exchanges over the CNICs (the plan's bytes are 0 otherwise).
    if (plan.exchange_bytes > 0)
      for (sg4::Host* x : exchange_ends) exchange[{x, x}] += plan.exchange_bytes;
    std::fill(busy.begin(), busy.end(), 0.0);
    GroupCompute compute(c_.gpu, hosts, plan, work, busy);
    for (int node : pass_nodes) in_pass_[node]++;
    const uint64_t failures = c_.members.failures();
    pipeline_.run(c_.transport, ForwardPass{load, push, plan.layer_s, m.layers, &exchange}, compute);
    for (int node : pass_nodes) in_pass_[node]--;
    // A node of the pass failed during it (node_failures.h): the lock-step pass is lost on every GPU.
    bool failed = false;
    if (c_.members.failures() != failures)
      for (int node : pass_nodes) failed = failed || c_.members.down(node);
    if (failed) {
      undo_pass(batches, members);
      for (size_t i = 0; i < n; ++i) {
        pes_[members[i]].busy_s += busy[i];
        pes_[members[i]].pass_s += now() - now0;
      }
      continue;
    }

    if (c_.timeline != nullptr)
      for (size_t i = 0; i < n; ++i)
        trace_pass(*c_.timeline, pes_[members[i]], batches[i].size(), chunks[i], busy[i],
                   forms[i].predicted_s, forms[i].cut, now0, now());
    c_.rec.prefill_time.add(plan.split, now() - now0, static_cast<double>(n));
    if (plan.tokens > 0) record_pass(plan, forms, now() - now0);

    // Account the computed tokens; finished requests go to their DE, a chunked one stays at the head.
    for (size_t i = 0; i < n; ++i) {
      PrefillEngineState& pe = pes_[members[i]];
      pe.busy_s += busy[i];  // its attention and its share of the group's MoE
      pe.pass_s += now() - now0;
      for (auto it = batches[i].rbegin(); it != batches[i].rend(); ++it) {
        Request& r = c_.requests[it->id];
        if (r.lost) continue;  // its DE's node failed during the pass: its slot is not reused
        r.prefilled += it->chunk.bsz;
        if (r.prefilled < r.miss - 1e-9) pe.ready.push_front(it->id);
      }
    }
    for (size_t i = 0; i < n; ++i)
      for (const auto& it : batches[i])
        if (!c_.requests[it.id].lost && c_.requests[it.id].prefilled >= c_.requests[it.id].miss - 1e-9)
          prefill_done(it.id);
    for (int node : pass_nodes) c_.members.poke(node);  // a draining node may leave the group now
  }
}

void PrefillService::undo_pass(std::vector<std::vector<PassItem>>& batches, const std::vector<int>& members) {
  c_.rec.passes_failed++;
  for (size_t i = 0; i < batches.size(); ++i) {
    PrefillEngineState& pe = pes_[members[i]];
    for (auto it = batches[i].rbegin(); it != batches[i].rend(); ++it) {
      Request& r = c_.requests[it->id];
      if (r.lost) continue;                   // node_failures.h let it go, with what it had loaded
      if (r.hit_pushed && !it->hit_pushed) {  // the pass's hit loads are lost: they run again
        const double hit = wire_bytes(r, r.hit * c_.kv_token);
        c_.rec.hit_bytes_loaded -= hit;
        c_.rec.lost_bytes_loaded += hit;
      }
      r.hit_pushed = it->hit_pushed;
      pe.ready.push_front(it->id);
    }
  }
}

void PrefillService::forget(RequestId id) {
  const Request& r = c_.requests[id];
  if (!r.pe_placed) return;
  auto& q = pes_[r.pe].ready;
  q.erase(std::remove(q.begin(), q.end(), id), q.end());
}

// The prefill is done: the first token is out, the PE lets the request go (its load, its PE buffer), and
// the DE buffer now holds the whole prompt KV (hit via either path, miss pushed by the PE).
void PrefillService::prefill_done(RequestId id) {
  Request& r = c_.requests[id];
  r.t_first = now();
  const int pe = r.pe;
  turns_->first_token(id);
  c_.loads.discharge_pe(pe, r);
  dispatcher_->pe_load_left(pe);
  c_.buffers.release(r, pes_[pe].node, true);
  c_.members.poke(pes_[pe].node);
  decode_->prompt_ready(id);
}

}  // namespace sim::engine
