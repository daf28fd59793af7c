#include "sim/metrics/link_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <simgrid/s4u.hpp>

#include "sim/core/check.h"
#include "sim/engine/sg_compat.h"

namespace sim::metrics {

namespace sg4 = simgrid::s4u;

LinkStats::LinkStats(const platform::PlatformHandles& h, double window_s, double series_interval_s)
    : h_(h), window_s_(window_s), series_interval_s_(series_interval_s) {
  for (size_t i = 0; i < h.links.size(); ++i) link_index_[h.links[i].link] = static_cast<int>(i);
  window_bytes_.assign(h.links.size(), 0.0);
  series_bytes_.assign(h.links.size(), 0.0);
  results_.resize(h.links.size());
}

LinkStats::Route& LinkStats::route(sg4::Host* from, sg4::Host* to) {
  auto it = routes_.find({from, to});
  if (it != routes_.end()) return *it->second;
  std::vector<sg4::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  std::vector<int> idx;
  for (const auto* l : links) {
    auto li = link_index_.find(l);
    SIM_CHECK(li != link_index_.end(), "link {} of route {} -> {} is not accounted", l->get_name(),
              from->get_name(), to->get_name());
    idx.push_back(li->second);
  }
  route_list_.push_back({std::move(idx), 0.0});
  routes_.emplace(std::make_pair(from, to), &route_list_.back());
  return route_list_.back();
}

LinkStats::Handle LinkStats::start(sg4::Host* from, sg4::Host* to, double bytes, double max_rate_Bps) {
  Flow f;
  f.route = &route(from, to);
  if (bytes >= 1) {
    f.size = std::round(bytes);
    f.route->sent += f.size;
    if (max_rate_Bps > 0) {
      // The rate must be set while the comm is INITED: before its ends are (setting both may start it).
      f.comm = sg4::Comm::sendto_init();
      f.comm->set_rate(max_rate_Bps);
      f.comm->set_payload_size(static_cast<uint64_t>(f.size));
      f.comm->set_source(from);
      f.comm->set_destination(to);
      if (f.comm->get_state() == sg4::Activity::State::INITED) f.comm->start();
    } else {
      f.comm = sg4::Comm::sendto_async(from, to, static_cast<uint64_t>(f.size));
    }
    transfers_++;
  }
  Handle id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    flows_[id] = std::move(f);
  } else {
    id = static_cast<Handle>(flows_.size());
    flows_.push_back(std::move(f));
  }
  peak_in_flight_ = std::max(peak_in_flight_, in_flight());
  peak_activities_ = std::max(peak_activities_, in_flight() + (other_in_flight_ ? *other_in_flight_ : 0));
  return id;
}

void LinkStats::credit(Flow& f, double done) {
  const double delta = done - f.credited;
  if (delta <= 0) return;
  for (int i : f.route->links) window_bytes_[i] += delta;
  f.credited = done;
}

void LinkStats::wait(Handle handle) {
  if (flows_[handle].comm) flows_[handle].comm->wait();
  Flow& f = flows_[handle];  // flows_ may have grown while waiting
  credit(f, f.size);
  f.comm = nullptr;
  free_.push_back(handle);
}

void LinkStats::set_timeline(Timeline* tl) {
  timeline_ = tl;
  tracks_.clear();
  track_of_.clear();
  if (tl == nullptr) return;
  std::map<std::pair<int, std::string>, int> index;  // (node, resource) -> track, in link order
  for (const auto& t : h_.links) {
    auto [it, added] = index.emplace(std::make_pair(t.node, t.resource), static_cast<int>(tracks_.size()));
    if (added) tracks_.push_back({fmt::format("n{} {}", t.node, t.resource), {}, {}, {}});
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
  for (auto& f : flows_)
    if (f.comm) credit(f, f.size - f.comm->get_remaining());
  if (timeline_ != nullptr) trace_window(last_sample_t_, dt);
  snic_node_bytes_.assign(h_.nodes.size(), 0.0);
  for (size_t i = 0; i < h_.links.size(); ++i) {
    const auto& t = h_.links[i];
    const double b = window_bytes_[i];
    window_bytes_[i] = 0;
    results_[i].bytes += b;
    series_bytes_[i] += b;
    if (t.resource == "snic") snic_node_bytes_[t.node] += b;
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
  for (size_t i = 0; i < h_.links.size(); ++i)
    results_[i].utilization = end_time > 0 ? results_[i].bytes / (h_.links[i].bandwidth_Bps * end_time) : 0;
  std::vector<double> expected(h_.links.size(), 0.0);
  for (const Route& r : route_list_)
    for (int i : r.links) expected[i] += r.sent;
  conservation_error_ = 0;
  for (size_t i = 0; i < h_.links.size(); ++i)
    conservation_error_ =
        std::max(conservation_error_, std::abs(results_[i].bytes - expected[i]) / std::max(expected[i], 1.0));
}

}  // namespace sim::metrics
