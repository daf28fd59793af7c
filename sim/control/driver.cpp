#include "sim/control/driver.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/core/check.h"
#include "sim/engine/dispatcher.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/request_log.h"
#include "sim/metrics/timeline.h"

namespace sim::control {

namespace {

// Releases within this much of now are due (float noise in arrival times).
constexpr double kDueSlackS = 1e-12;

}  // namespace

double TtftLog::windowed_mean(double now, double window_s, int min_turns) const {
  double sum = waiting * now - waiting_issue_sum;
  int count = waiting;
  for (auto it = first_tokens.rbegin(); it != first_tokens.rend() && it->t > now - window_s; ++it) {
    sum += it->ttft;
    count++;
  }
  return count >= std::max(1, min_turns) ? std::max(0.0, sum / count) : -1.0;
}

double TtftLog::windowed_percentile(double now, double window_s, int min_turns, double p) const {
  std::vector<double> v;
  for (const auto& w : waiting_issues) v.push_back(now - w.first);
  for (auto it = first_tokens.rbegin(); it != first_tokens.rend() && it->t > now - window_s; ++it)
    v.push_back(it->ttft);
  if (static_cast<int>(v.size()) < std::max(1, min_turns)) return -1.0;
  const size_t k = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
  const size_t i = std::min(v.size() - 1, k == 0 ? 0 : k - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return std::max(0.0, v[i]);
}

double TtftLog::windowed_attainment(double now, double window_s, int min_turns) const {
  int count = 0, ok = 0;
  for (const auto& [issue, bound] : waiting_issues) {
    count++;
    ok += now - issue <= bound ? 1 : 0;
  }
  for (auto it = first_tokens.rbegin(); it != first_tokens.rend() && it->t > now - window_s; ++it) {
    count++;
    ok += it->ttft <= it->bound ? 1 : 0;
  }
  return count >= std::max(1, min_turns) ? static_cast<double>(ok) / count : -1.0;
}

std::pair<int, int> TtftLog::window_counts(double now, double window_s) const {
  int all = 0, first = 0;
  for (auto it = first_tokens.rbegin(); it != first_tokens.rend() && it->t > now - window_s; ++it) {
    all++;
    first += it->first_turn ? 1 : 0;
  }
  return {all, first};
}

Driver::Driver(engine::EngineContext& ctx, const std::vector<workload::Agent>& agents,
               engine::Dispatcher& dispatcher)
    : c_(ctx),
      agents_(agents),
      dispatcher_(dispatcher),
      online_(ctx.sc.workload.mode == "online"),
      cv_(simgrid::s4u::ConditionVariable::create()) {
  next_turn_.assign(agents.size(), 0);
  context_.assign(agents.size(), 0.0);
  agents_left_ = static_cast<int>(agents.size());
  if (ctx.sc.slo.relative()) unloaded_.emplace(ctx.sc);
}

float Driver::ttft_bound(const engine::Request& r) const {
  return unloaded_ ? static_cast<float>(c_.sc.slo.ttft_scale * r.unloaded_ttft) : 0.0f;
}

void Driver::set_arrivals(std::vector<double> arrivals) {
  SIM_CHECK(arrivals.size() == agents_.size(), "{} arrival times for {} agents", arrivals.size(),
            agents_.size());
  arrivals_ = std::move(arrivals);
}

void Driver::set_replay(std::vector<std::vector<ReplayTurn>> sessions, bool closed_loop) {
  closed_loop_ = closed_loop;
  for (const auto& s : sessions) SIM_CHECK(!s.empty(), "an empty replay session");
  replay_ = std::move(sessions);
  next_turn_.assign(replay_.size(), 0);
  context_.assign(replay_.size(), 0.0);
  agents_left_ = static_cast<int>(replay_.size());
}

int Driver::num_agents() const {
  return replay_.empty() ? static_cast<int>(agents_.size()) : static_cast<int>(replay_.size());
}

int Driver::num_turns(int agent) const {
  return replay_.empty() ? agents_[agent].num_turns : static_cast<int>(replay_[agent].size());
}

void Driver::start() {
  const int n = num_agents();
  double turns = 0;
  for (int a = 0; a < n; ++a) turns += num_turns(a);
  ttft_.mean_turns = n > 0 ? turns / n : 1.0;
  engine::spawn("driver", c_.h.control, [this]() { loop(); });
}

void Driver::wake_all() {
  cv_->notify_all();
}

void Driver::release_at(double t, int agent) {
  releases_.emplace_back(t, agent);
  std::push_heap(releases_.begin(), releases_.end(), std::greater<>());
  cv_->notify_all();
}

void Driver::issue(int agent) {
  if (c_.run.finished()) return;
  const int k = next_turn_[agent];
  engine::Request r;
  r.agent = agent;
  r.turn = k;
  if (replay_.empty()) {
    const workload::Turn t = agents_[agent].turn(k);
    // What storage still holds of the context is read; what it gave up is computed again.
    r.hit = c_.stored.lookup(agent, context_[agent], engine::now());
    r.recomputed = context_[agent] - r.hit;
    r.miss = t.append + r.recomputed;
    r.gen = std::max(1, t.gen);
    context_[agent] += t.append + t.gen;
  } else {
    const ReplayTurn& t = replay_[agent][k];
    r.hit = c_.stored.lookup(agent, t.hit, engine::now());  // unlimited storage: a trace's hits
    r.miss = t.miss;
    r.gen = t.gen;
  }
  r.t_issue = engine::now();
  if (unloaded_) r.unloaded_ttft = static_cast<float>(unloaded_->ttft_s(r.hit, r.miss));
  wait_first_token(r.t_issue, ttft_bound(r));
  submit(r);
}

void Driver::wait_first_token(double t_issue, float bound) {
  ttft_.waiting++;
  ttft_.waiting_issue_sum += t_issue;
  if (online_) ttft_.waiting_issues.emplace(t_issue, bound);
}

void Driver::submit(const engine::Request& r) {
  const engine::RequestId id = c_.requests.add(r);
  c_.rec.peak_in_flight = std::max(c_.rec.peak_in_flight, c_.requests.in_flight());
  dispatcher_.submit(id);
}

void Driver::restart(engine::RequestId lost, int event) {
  const engine::Request& old = c_.requests[lost];
  engine::Request r;
  r.agent = old.agent;
  r.turn = old.turn;
  r.gen = old.gen;
  r.t_issue = old.t_issue;
  r.unloaded_ttft = old.unloaded_ttft;  // the turn's own, whatever storage holds now
  r.restarts = old.restarts + 1;
  r.restart_event = event;
  // The lost request's lookup pinned the prefix until its reads were done: the new one pins it again.
  if (old.t_ready < 0) c_.stored.unpin(old.agent, engine::now());
  r.hit = c_.stored.lookup(old.agent, old.hit, engine::now());
  r.recomputed = old.recomputed + (old.hit - r.hit);  // what storage gave up meanwhile is computed
  r.miss = old.miss + (old.hit - r.hit);
  // Its first token came, and is lost with it: the turn waits for one again.
  if (old.t_first >= 0) wait_first_token(r.t_issue, ttft_bound(r));
  submit(r);
}

void Driver::loop() {
  const int n = num_agents();
  for (int a = 0; a < n; ++a) {
    const double t = !replay_.empty()    ? (closed_loop_ ? 0.0 : replay_[a].front().arrival_s)
                     : arrivals_.empty() ? 0.0
                                         : arrivals_[a];
    releases_.emplace_back(t, a);
  }
  std::make_heap(releases_.begin(), releases_.end(), std::greater<>());
  std::vector<int> due;
  while (!c_.run.finished()) {
    // Every release due now is issued in one batch, in (time, agent) order, without taking the lock in
    // between (offline, all first turns go out at t = 0 as one batch).
    due.clear();
    while (!releases_.empty() && releases_.front().first <= engine::now() + kDueSlackS) {
      due.push_back(releases_.front().second);
      std::pop_heap(releases_.begin(), releases_.end(), std::greater<>());
      releases_.pop_back();
    }
    for (int agent : due) {
      if (next_turn_[agent] == 0) agents_arrived_++;
      issue(agent);
    }
    std::unique_lock<simgrid::s4u::Mutex> lock(c_.run.mutex());
    if (c_.run.finished()) break;
    if (releases_.empty()) {
      cv_->wait(lock);
    } else if (releases_.front().first > engine::now() + kDueSlackS) {
      cv_->wait_until(lock, releases_.front().first);
    }
  }
}

void Driver::first_token(engine::RequestId id) {
  const engine::Request& r = c_.requests[id];
  const double t_first = engine::now();
  ttft_.waiting--;
  ttft_.waiting_issue_sum -= r.t_issue;
  if (online_) {
    const float bound = ttft_bound(r);
    ttft_.waiting_issues.erase(ttft_.waiting_issues.find({r.t_issue, bound}));
    ttft_.first_tokens.push_back({t_first, static_cast<float>(t_first - r.t_issue), r.turn == 0, bound});
  }
  if (c_.timeline != nullptr && c_.timeline->sampled_agent(r.agent)) {
    metrics::TurnTimes t = metrics::turn_times(r);
    t.first = t_first;
    c_.timeline->turn_first_token(t);
  }
}

void Driver::record(const engine::Request& r, const engine::TurnSample& s, double t_done) {
  metrics::TurnRecord t;
  t.agent = r.agent;
  t.turn = r.turn;
  t.issue = r.t_issue;
  t.read_start = r.t_read_start;
  t.read_end = r.t_read_end;
  t.kv_ready = r.t_ready;
  t.prefill_start = r.t_prefill_start;
  t.first_token = r.t_first;
  t.second_token = r.gen > 1 ? r.t_second : -1;
  t.done = t_done;
  t.ttft = r.t_first - r.t_issue;
  t.tpot = s.tpot;
  t.hit = r.hit;
  t.miss = r.miss;
  t.gen = r.gen;
  t.read_path = r.hit <= 0                                     ? "none"
                : r.kv_transport == engine::KvTransport::kFree ? "free"
                : r.pe_fraction >= 1                           ? "pe"
                : r.pe_fraction <= 0                           ? "de"
                                                               : "split";
  t.pe = r.pe;
  t.pe_node = c_.loads.pe_node(r.pe);
  t.de = r.de;
  t.de_node = c_.loads.de_node(r.de);
  t.pe_read_bytes = engine::wire_bytes(r, engine::storage_tokens(r, true) * c_.kv_token);
  t.de_read_bytes = engine::wire_bytes(r, engine::storage_tokens(r, false) * c_.kv_token);
  c_.request_log->write(t);
}

void Driver::turn_done(engine::RequestId id, double t_done) {
  const engine::Request& r = c_.requests[id];
  if (c_.timeline != nullptr && c_.timeline->sampled_agent(r.agent)) {
    metrics::TurnTimes t = metrics::turn_times(r);
    t.done = t_done;
    c_.timeline->turn_done(t);
  }
  engine::TurnSample s;
  s.t_first = static_cast<float>(r.t_first);
  s.ttft = static_cast<float>(r.t_first - r.t_issue);
  if (r.gen > 1) {
    // TTST: the gap from the first token to the second (the prefill-to-decode handoff: HBM allocation,
    // H2D, the first decode step), as the paper uses it; TTFT is the time to the first.
    s.ttst = static_cast<float>(r.t_second - r.t_first);
    // TPOT: the time per token once decoding runs (from the second token on); the gap between the first
    // and the second token is TTST. A two-token turn has only that gap.
    s.tpot = static_cast<float>(r.gen > 2 ? (r.t_done - r.t_second) / (r.gen - 2) : r.t_second - r.t_first);
    s.alloc = static_cast<float>(r.t_decode_join - r.t_first);
  }
  s.read = static_cast<float>(r.read_s);
  s.queue = static_cast<float>(std::max(0.0, r.t_ready - r.t_issue - r.read_s));
  s.prefill = static_cast<float>(r.t_first - r.t_ready);
  if (unloaded_) {
    s.ttft_unloaded = r.unloaded_ttft;
    s.tpot_unloaded = static_cast<float>(unloaded_->tpot_s(r.hit + r.miss));
  }
  c_.rec.turns.push_back(s);
  if (c_.request_log != nullptr) record(r, s, t_done);
  c_.rec.turns_completed++;
  c_.rec.prompt_tokens += r.hit + r.miss;
  c_.rec.miss_tokens += r.miss;
  c_.rec.gen_tokens += r.gen;
  c_.rec.last_done = std::max(c_.rec.last_done, t_done);
  c_.rec.recomputed_tokens += r.recomputed;
  // The turn's KV is persisted: storage holds the agent's whole context so far.
  c_.stored.store(r.agent, r.hit + r.miss + r.gen, t_done);
  if (!c_.dram_tier.empty()) {
    // The DE node's DRAM held the whole prompt KV (its buffer) and the generated KV on its way to storage:
    // its tier keeps the context. The PE node's DRAM held the hit when the PE side read all of it.
    c_.dram_tier[c_.loads.de_node(r.de)].store(r.agent, r.hit + r.miss + r.gen, t_done);
    auto& pe_tier = c_.dram_tier[c_.loads.pe_node(r.pe)];
    if (r.pe_fraction >= 1 && r.kv_transport == engine::KvTransport::kLinks) {
      pe_tier.store(r.agent, r.hit, t_done);
    } else {
      pe_tier.release(r.agent, t_done);
    }
  }
  const int agent = r.agent;
  c_.requests.release(id);
  next_turn_[agent]++;
  if (!replay_.empty() && next_turn_[agent] < num_turns(agent)) {
    // Open loop per session: the next request at its trace arrival, or now when this one ended later.
    // Closed loop: its think time after this one's end.
    const ReplayTurn& next = replay_[agent][next_turn_[agent]];
    const double at = closed_loop_ ? engine::now() + next.think_s : next.arrival_s;
    if (at > engine::now()) {
      release_at(at, agent);
    } else {
      issue(agent);
    }
  } else if (next_turn_[agent] < num_turns(agent)) {
    const double think = agents_[agent].turn(next_turn_[agent]).think_s;
    if (think > 0) {
      engine::spawn_daemon("think", c_.h.control, [this, agent, think]() {
        engine::sleep_for(think);
        issue(agent);
      });
    } else {
      issue(agent);
    }
  } else if (--agents_left_ == 0) {
    c_.run.all_done(t_done);
  }
}

}  // namespace sim::control
