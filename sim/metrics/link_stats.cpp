#include "sim/metrics/link_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <simgrid/s4u.hpp>

#include "sim/core/check.h"
#include "sim/core/series_bound.h"
#include "sim/engine/sg_compat.h"

namespace sim::metrics {

namespace sg4 = simgrid::s4u;

LinkStats::LinkStats(transport::Transport& t, double window_s, double series_interval_s)
    : transport_(t),
      h_(t.handles()),
      window_s_(window_s),
      series_interval_s_(series_interval_s),
      base_series_interval_s_(series_interval_s) {
  window_bytes_.assign(h_.links.size(), 0.0);
  series_bytes_.assign(h_.links.size(), 0.0);
  started_bytes_.assign(h_.links.size(), 0.0);
  results_.resize(h_.links.size());
  transport_.set_observer(this);
}

LinkStats::~LinkStats() {
  transport_.set_observer(nullptr);
}

void LinkStats::on_start(const std::vector<int>& links, double bytes, transport::TrafficClass) {
  for (int i : links) started_bytes_[i] += bytes;
}

void LinkStats::on_cancel(const std::vector<int>& links, double bytes, transport::TrafficClass) {
  for (int i : links) started_bytes_[i] -= bytes;
}

void LinkStats::on_progress(const std::vector<int>& links, double bytes, transport::TrafficClass) {
  for (int i : links) window_bytes_[i] += bytes;
}

void LinkStats::set_timeline(Timeline* tl) {
  timeline_ = tl;
  tracks_.clear();
  track_of_.clear();
  if (tl == nullptr) return;
  std::map<std::pair<int, std::string>, int> index;  // (node, resource) -> track, in link order
  for (const auto& t : h_.links) {
    const std::string resource = platform::name(t.resource);
    auto [it, added] = index.emplace(std::make_pair(t.node, resource), static_cast<int>(tracks_.size()));
    if (added) tracks_.push_back({fmt::format("n{} {}", t.node, resource), {}, {}, {}});
    CounterTrack& c = tracks_[it->second];
    auto s = std::find(c.series.begin(), c.series.end(), t.direction);
    if (s == c.series.end()) {
      c.series.push_back(t.direction);
      c.sum.push_back(0);
      c.links.push_back(0);
      s = c.series.end() - 1;
    }
    const int k = static_cast<int>(s - c.series.begin());
    c.links[k]++;
    track_of_.emplace_back(it->second, k);
  }
}

// The counter samples of the window [t0, t0 + dt] from window_bytes_ (before they are cleared).
void LinkStats::trace_window(double t0, double dt) {
  for (auto& c : tracks_) std::fill(c.sum.begin(), c.sum.end(), 0.0);
  for (size_t i = 0; i < h_.links.size(); ++i) {
    const auto [track, k] = track_of_[i];
    tracks_[track].sum[k] += window_bytes_[i] / (h_.links[i].bandwidth_Bps * dt);
  }
  TimelineArg args[Timeline::kMaxArgs];
  for (const auto& c : tracks_) {
    const size_t n = std::min<size_t>(c.series.size(), Timeline::kMaxArgs);
    for (size_t k = 0; k < n; ++k) args[k] = {c.series[k], std::round(c.sum[k] / c.links[k] * 1e6) / 1e6};
    timeline_->counter(timeline_->links_pid(), timeline_->links_tid(), c.name, t0, args, n);
  }
}

void LinkStats::sample(double now) {
  const double dt = now - last_sample_t_;
  if (dt <= 0) return;
  transport_.settle();
  if (timeline_ != nullptr) trace_window(last_sample_t_, dt);
  snic_node_bytes_.assign(h_.nodes.size(), 0.0);
  for (size_t i = 0; i < h_.links.size(); ++i) {
    const auto& t = h_.links[i];
    const double b = window_bytes_[i];
    window_bytes_[i] = 0;
    results_[i].bytes += b;
    series_bytes_[i] += b;
    if (t.resource == platform::ResourceClass::kSnic) snic_node_bytes_[t.node] += b;
    if (b > 0) {
      results_[i].busy_s += dt;
      // A partial last window shorter than a tenth of a window would make a noisy peak; skip it.
      if (dt >= 0.1 * window_s_) results_[i].peak = std::max(results_[i].peak, b / (t.bandwidth_Bps * dt));
    }
  }
  double max_b = 0, sum_b = 0;
  for (double b : snic_node_bytes_) {
    max_b = std::max(max_b, b);
    sum_b += b;
  }
  if (sum_b > 0 && dt >= 0.1 * window_s_) {
    const double ratio = max_b / (sum_b / snic_node_bytes_.size());
    snic_ratio_sum_ += ratio;
    snic_windows_++;
    snic_ratio_windows_.emplace_back(static_cast<float>(now), static_cast<float>(ratio));
  }
  last_sample_t_ = now;
  if (series_interval_s_ > 0 && now - last_series_t_ >= series_interval_s_ * (1 - 1e-9)) {
    const double sdt = now - last_series_t_;
    for (size_t i = 0; i < h_.links.size(); ++i) {
      results_[i].series.push_back(series_bytes_[i] / (h_.links[i].bandwidth_Bps * sdt));
      series_bytes_[i] = 0;
    }
    last_series_t_ = now;
    // Memory bounded whatever the run's length (core/series_bound.h): at twice the points the results
    // keep, pairs are merged and the interval doubles.
    if (results_.front().series.size() >= 2 * core::kMaxSeriesPoints) {
      for (auto& r : results_) r.series = core::merge_points(r.series, 2, true);
      series_interval_s_ *= 2;
    }
  }
}

void LinkStats::start_sampler() {
  engine::spawn_daemon("link-sampler", h_.nodes.front().dram, [this]() {
    while (true) {
      engine::sleep_for(window_s_);
      sample(sg4::Engine::get_clock());
    }
  });
}

void LinkStats::finish(double end_time) {
  sample(end_time);
  // The series at the run's interval (core/series_bound.h), from the one they were kept at: one point per
  // whole interval (a last group of fewer points is not one).
  const size_t f =
      core::merge_factor(series_interval_s_, core::series_interval(base_series_interval_s_, end_time));
  for (auto& r : results_) {
    const bool partial = r.series.size() % f != 0;
    r.series = core::merge_points(r.series, f, true);
    if (partial) r.series.pop_back();
  }
  for (size_t i = 0; i < h_.links.size(); ++i)
    results_[i].utilization = end_time > 0 ? results_[i].bytes / (h_.links[i].bandwidth_Bps * end_time) : 0;
  const std::vector<double>& expected = started_bytes_;
  conservation_error_ = 0;
  for (size_t i = 0; i < h_.links.size(); ++i)
    conservation_error_ =
        std::max(conservation_error_, std::abs(results_[i].bytes - expected[i]) / std::max(expected[i], 1.0));
}

}  // namespace sim::metrics
