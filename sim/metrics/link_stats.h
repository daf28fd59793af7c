// LinkStats: the bytes each accounted link direction carries, and its utilisation over time, measured on the
// transfers themselves. It observes the Transport (transport/transport.h): every transfer reports its
// progress (from SimGrid's remaining bytes, read at each window boundary and at its end), credited to
// every link of its route. So bytes per link are exact and per window as well; rates are SimGrid's,
// nothing here models traffic. (SimGrid's link-load plugin integrates a link's load only on events of comms
// that cross that link, which misses rate changes caused elsewhere: it is not used.)
//   bytes        cumulative bytes carried
//   utilization  bytes / (bandwidth x duration), duration = the simulated time of the run (its end)
//   peak         max over windows of window bytes / (bandwidth x window)
//   busy_s       total length of the windows in which the link carried any byte (window resolution)
//   series       utilisation averaged over each series interval (empty when series are off)
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/timeline.h"
#include "sim/platform/handles.h"
#include "sim/transport/transport.h"

namespace sim::metrics {

struct LinkResult {
  double bytes = 0;
  double utilization = 0;
  double peak = 0;
  double busy_s = 0;
  std::vector<double> series;
};

class LinkStats : public transport::TransferObserver {
 public:
  // Observes `t` from now on. REQUIRES: the platform of `t` is built. window_s > 0; series_interval_s = 0
  // (no series) or >= window_s.
  LinkStats(transport::Transport& t, double window_s, double series_interval_s);
  ~LinkStats() override;

  void on_start(const std::vector<int>& links, double bytes, transport::TrafficClass c) override;
  void on_progress(const std::vector<int>& links, double bytes, transport::TrafficClass c) override;
  void on_cancel(const std::vector<int>& links, double bytes, transport::TrafficClass c) override;

  // Byte conservation, after finish(): the largest relative gap, over links, between the bytes credited
  // to a link and the sum of the sizes of the transfers whose route crosses it (0 when every transfer
  // has ended and each credited exactly its size to each link of its route).
  double conservation_error() const { return conservation_error_; }

  // outputs.timeline (nullptr = off): at each window sample, a counter sample per node and resource
  // ("n0 cnic"), one series per direction: the utilisation of the window (bytes / (bandwidth x window)),
  // averaged over the node's links of that direction (its GPUs' CNICs, say), rounded to 1e-6, stamped at
  // the window's start. REQUIRES: before start_sampler(); the timeline's layout is set; `tl` outlives
  // the run.
  void set_timeline(Timeline* tl);

  // Spawns the sampling actor (a daemon: it ends with the simulation).
  void start_sampler();
  // Closes the last (partial) window at `end_time` and computes the results. Call after Engine::run().
  void finish(double end_time);

  const std::vector<LinkResult>& results() const { return results_; }
  const platform::PlatformHandles& handles() const { return h_; }
  // Storage NIC balance (DualPath §7.5): max/avg of per-node SNIC traffic (in + out) within each window,
  // averaged over the windows in which any SNIC carried traffic. 1.0 = perfect balance.
  double snic_max_avg() const { return snic_windows_ > 0 ? snic_ratio_sum_ / snic_windows_ : 1.0; }
  // The same per window: (window end time, max/avg), for the windows that count.
  const std::vector<std::pair<float, float>>& snic_ratio_windows() const { return snic_ratio_windows_; }

 private:
  void sample(double now);

  transport::Transport& transport_;
  const platform::PlatformHandles& h_;
  double window_s_;
  double series_interval_s_;  // the series' interval so far (doubled when they grow long)
  double base_series_interval_s_;
  std::vector<double> started_bytes_;  // per link: sizes of the transfers whose route crosses it
  double conservation_error_ = 0;
  std::vector<double> window_bytes_;  // per link, since the last sample
  std::vector<double> series_bytes_;  // per link, since the last series point
  std::vector<double> snic_node_bytes_;
  double last_sample_t_ = 0;
  double last_series_t_ = 0;
  std::vector<LinkResult> results_;
  double snic_ratio_sum_ = 0;
  std::vector<std::pair<float, float>> snic_ratio_windows_;
  int snic_windows_ = 0;
  // outputs.timeline: counter tracks (node, resource), series per direction; each link's (track, series).
  struct CounterTrack {
    std::string name;
    std::vector<std::string> series;
    std::vector<double> sum;
    std::vector<int> links;
  };
  void trace_window(double t0, double dt);
  Timeline* timeline_ = nullptr;
  std::vector<CounterTrack> tracks_;
  std::vector<std::pair<int, int>> track_of_;
};

}  // namespace sim::metrics
