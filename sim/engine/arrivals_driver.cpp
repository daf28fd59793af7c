// The driver (the one actor that releases turns at their times: first turns of offline agents at 0,
// online agents at their Poisson arrivals, trace-replay requests at their trace arrivals) and the online
// monitor that evaluates the stop rules (scenarios/README.md, "workload.online"). Neither spawns an
// actor per agent or per request: pending releases wait in a min-heap that the driver sleeps on.
#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/core/check.h"
#include "sim/engine/cluster.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

namespace {

// Releases within this much of now are due (float noise in arrival times).
constexpr double kDueSlackS = 1e-12;

}  // namespace

void Cluster::set_arrivals(std::vector<double> arrivals) {
  SIM_CHECK(arrivals.size() == agents_.size(), "{} arrival times for {} agents", arrivals.size(),
            agents_.size());
  arrivals_ = std::move(arrivals);
}

void Cluster::set_replay(std::vector<std::vector<ReplayTurn>> sessions) {
  for (const auto& s : sessions) SIM_CHECK(!s.empty(), "an empty replay session");
  replay_ = std::move(sessions);
  next_turn_.assign(replay_.size(), 0);
  context_.assign(replay_.size(), 0.0);
  agents_left_ = static_cast<int>(replay_.size());
}

void Cluster::release_at(double t, int agent) {
  releases_.emplace_back(t, agent);
  std::push_heap(releases_.begin(), releases_.end(), std::greater<>());
  cv_done_->notify_all();
}

void Cluster::stop(const char* reason) {
  if (finished_) return;
  stopped_by_ = reason;
  stopped_at_s_ = engine::now();
  finish();
  cv_done_->notify_all();
}

void Cluster::driver_loop() {
  const int n = num_agents();
  for (int a = 0; a < n; ++a) {
    const double t = !replay_.empty() ? replay_[a].front().arrival_s : arrivals_.empty() ? 0.0 : arrivals_[a];
    releases_.emplace_back(t, a);
  }
  std::make_heap(releases_.begin(), releases_.end(), std::greater<>());
  std::vector<int> due;
  while (!finished_ && agents_left_ > 0) {
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
      issue_turn(agent);
    }
    std::unique_lock<simgrid::s4u::Mutex> lock(*mutex_);
    if (finished_) break;
    if (agents_left_ == 0) {
      stopped_at_s_ = engine::now();
      break;
    }
    if (releases_.empty()) {
      cv_done_->wait(lock);
    } else if (releases_.front().first > engine::now() + kDueSlackS) {
      cv_done_->wait_until(lock, releases_.front().first);
    }
  }
  finish();
}

double Cluster::windowed_ttft(double window_s, int min_turns) const {
  const double now = engine::now();
  double sum = waiting_first_ * now - waiting_first_issue_sum_;
  int count = waiting_first_;
  for (auto it = first_tokens_.rbegin(); it != first_tokens_.rend() && it->first > now - window_s; ++it) {
    sum += it->second;
    count++;
  }
  return count >= std::max(1, min_turns) ? std::max(0.0, sum / count) : -1.0;
}

void Cluster::monitor_loop() {
  const config::OnlineConfig& o = sc_.workload.online;
  while (!finished_) {
    engine::sleep_for(o.check_interval_s);
    if (finished_) return;
    const double now = engine::now();
    // (a) TTFT over the SLO: the windowed mean TTFT above slo.ttft_s, once the window holds
    // slo_min_turns turns (the first few arrivals alone, all cold first turns, say nothing of the load).
    if (o.stop_on_slo) {
      const double m = windowed_ttft(o.slo_window_s, o.slo_min_turns);
      if (m > sc_.slo.ttft_s) {
        stop("ttft_slo");
        return;
      }
    }
    // (b) Steady state (DualPath §7.4): the mean TTFT of the last steady_window_s within steady_tolerance
    // (relative) of the same measure steady_lag_s earlier (the latest check at or before now - lag).
    if (o.stop_on_steady) {
      const double m = windowed_ttft(o.steady_window_s, 1);
      steady_log_.emplace_back(now, m);
      const double then = now - o.steady_lag_s;
      if (then >= o.steady_window_s - 1e-9) {
        auto it =
            std::upper_bound(steady_log_.begin(), steady_log_.end(), std::make_pair(then + 1e-9, 1e300));
        if (it != steady_log_.begin()) {
          const double prev = std::prev(it)->second;
          if (m >= 0 && prev > 0 && std::abs(m - prev) <= o.steady_tolerance * prev) {
            stop("steady_state");
            return;
          }
        }
      }
    }
  }
}

}  // namespace sim::engine
