#include "sim/control/stop_rules.h"

#include <algorithm>
#include <cmath>

#include "sim/engine/sg_compat.h"

namespace sim::control {

void StopRules::start(simgrid::s4u::Host* host) {
  engine::spawn_daemon("online-monitor", host, [this]() { loop(); });
}

bool StopRules::warmup_over(double now) const {
  const config::SloConfig& slo = sc_.slo;
  if (slo.warmup_s >= 0) return now >= slo.warmup_s - 1e-9;
  const config::OnlineConfig& o = sc_.workload.online;
  const auto [turns, first_turns] = log_.window_counts(now, o.slo_window_s);
  if (turns < std::max(1, o.slo_min_turns)) return false;
  // At steady state every agent that arrives gives one first turn per mean_turns turns.
  return first_turns <= kWarmupShareFactor * turns / std::max(1.0, log_.mean_turns);
}

void StopRules::loop() {
  const config::OnlineConfig& o = sc_.workload.online;
  while (!run_.finished()) {
    engine::sleep_for(o.check_interval_s);
    if (run_.finished()) return;
    const double now = engine::now();
    if (warmup_end_s_ < 0 && warmup_over(now)) warmup_end_s_ = sc_.slo.warmup_s >= 0 ? sc_.slo.warmup_s : now;
    if (o.stop_on_slo && warmup_end_s_ >= 0 && sc_.slo.relative()) {
      // Relative: the share of the window's turns within their own bound, against slo.attainment.
      const double a = log_.windowed_attainment(now, o.slo_window_s, o.slo_min_turns);
      if (a >= 0 && a < sc_.slo.attainment) {
        run_.stop("ttft_slo", now);
        return;
      }
    } else if (o.stop_on_slo && warmup_end_s_ >= 0) {
      const std::string& stat = sc_.slo.statistic;
      const double m = stat == "mean" ? log_.windowed_mean(now, o.slo_window_s, o.slo_min_turns)
                                      : log_.windowed_percentile(now, o.slo_window_s, o.slo_min_turns,
                                                                 std::stod(stat.substr(1)));
      if (m > sc_.slo.ttft_s) {
        run_.stop("ttft_slo", now);
        return;
      }
    }
    if (o.stop_on_steady) {
      const double m = log_.windowed_mean(now, o.steady_window_s, 1);
      steady_log_.emplace_back(now, m);
      const double then = now - o.steady_lag_s;
      if (then >= o.steady_window_s - 1e-9) {
        auto it =
            std::upper_bound(steady_log_.begin(), steady_log_.end(), std::make_pair(then + 1e-9, 1e300));
        if (it != steady_log_.begin()) {
          const double prev = std::prev(it)->second;
          if (m >= 0 && prev > 0 && std::abs(m - prev) <= o.steady_tolerance * prev) {
            run_.stop("steady_state", now);
            return;
          }
        }
      }
    }
  }
}

}  // namespace sim::control
