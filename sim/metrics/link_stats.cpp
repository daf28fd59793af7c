#include "sim/metrics/link_stats.h"

#include <simgrid/plugins/load.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>

#include "sim/engine/sg_compat.h"

namespace sim::metrics {

namespace sg4 = simgrid::s4u;

LinkStats::LinkStats(const platform::PlatformHandles& h, double window_s, double series_interval_s)
    : h_(h), window_s_(window_s), series_interval_s_(series_interval_s) {
  last_bytes_.assign(h.links.size(), 0.0);
  series_start_bytes_.assign(h.links.size(), 0.0);
  results_.resize(h.links.size());
}

void LinkStats::sample(double now) {
  const double dt = now - last_sample_t_;
  if (dt <= 0) return;
  for (size_t i = 0; i < h_.links.size(); ++i) {
    const auto& t = h_.links[i];
    const double cum = sg_link_get_cum_load(t.link);
    const double delta = cum - last_bytes_[i];
    last_bytes_[i] = cum;
    if (delta > 0) {
      results_[i].busy_s += dt;
      // A partial last window shorter than a tenth of a window would inflate the peak; skip it.
      if (dt >= 0.1 * window_s_) results_[i].peak = std::max(results_[i].peak, delta / (t.bandwidth_Bps * dt));
    }
  }
  last_sample_t_ = now;
  if (series_interval_s_ > 0 && now - last_series_t_ >= series_interval_s_ * (1 - 1e-9)) {
    const double sdt = now - last_series_t_;
    for (size_t i = 0; i < h_.links.size(); ++i) {
      results_[i].series.push_back((last_bytes_[i] - series_start_bytes_[i]) / (h_.links[i].bandwidth_Bps * sdt));
      series_start_bytes_[i] = last_bytes_[i];
    }
    last_series_t_ = now;
  }
}

void LinkStats::start() {
  engine::spawn_daemon("link-sampler", h_.nodes.front().dram, [this]() {
    while (true) {
      engine::sleep_for(window_s_);
      sample(sg4::Engine::get_clock());
    }
  });
}

void LinkStats::finish(double end_time) {
  sample(end_time);
  for (size_t i = 0; i < h_.links.size(); ++i) {
    results_[i].bytes = last_bytes_[i];
    results_[i].utilization = end_time > 0 ? last_bytes_[i] / (h_.links[i].bandwidth_Bps * end_time) : 0;
  }
}

}  // namespace sim::metrics
