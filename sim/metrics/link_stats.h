// LinkStats: bytes and utilisation of every accounted link direction, read from SimGrid's link-load plugin
// (cumulative bytes), sampled at a fixed window by a daemon actor. Nothing here models traffic.
//   bytes        cumulative bytes carried (exact, from the plugin)
//   utilization  bytes / (bandwidth x duration), duration = the run's end time
//   peak         max over windows of window bytes / (bandwidth x window)
//   busy_s       total length of the windows in which the link carried any byte (window resolution)
//   series       utilisation averaged over each series interval (empty when series are off)
#pragma once

#include <string>
#include <vector>

#include "sim/platform/handles.h"

namespace sim::metrics {

struct LinkResult {
  double bytes = 0;
  double utilization = 0;
  double peak = 0;
  double busy_s = 0;
  std::vector<double> series;
};

class LinkStats {
 public:
  // REQUIRES: the platform is built (the plugin tracks every link of `h`). window_s > 0;
  // series_interval_s = 0 (no series) or >= window_s.
  LinkStats(const platform::PlatformHandles& h, double window_s, double series_interval_s);

  // Spawns the sampling actor (a daemon: it ends with the simulation).
  void start();
  // Closes the last (partial) window at `end_time` and computes the results. Call after Engine::run().
  void finish(double end_time);

  const std::vector<LinkResult>& results() const { return results_; }
  const platform::PlatformHandles& handles() const { return h_; }
  double window_s() const { return window_s_; }
  double series_interval_s() const { return series_interval_s_; }

 private:
  void sample(double now);

  const platform::PlatformHandles& h_;
  double window_s_;
  double series_interval_s_;
  double last_sample_t_ = 0;
  double last_series_t_ = 0;
  std::vector<double> last_bytes_;
  std::vector<double> series_start_bytes_;
  std::vector<LinkResult> results_;
};

}  // namespace sim::metrics
