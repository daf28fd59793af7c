// LinkStats: the bytes each accounted link direction carries, and its utilisation over time, measured on the
// transfers themselves. Every transfer of the simulation goes through send()/start(): a SimGrid comm whose
// progress (Comm::get_remaining, from SimGrid's max-min solver) is read at each window boundary and at its
// end, and credited to every link of its route. So bytes per link are exact and per window as well; rates
// are SimGrid's, nothing here models traffic. (SimGrid's link-load plugin integrates a link's load only on
// events of comms that cross that link, which misses rate changes caused elsewhere: it is not used.)
//   bytes        cumulative bytes carried
//   utilization  bytes / (bandwidth x duration), duration = the run's end time
//   peak         max over windows of window bytes / (bandwidth x window)
//   busy_s       total length of the windows in which the link carried any byte (window resolution)
//   series       utilisation averaged over each series interval (empty when series are off)
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <simgrid/s4u/Comm.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/metrics/timeline.h"
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
  using Handle = uint32_t;

  // REQUIRES: the platform of `h` is built. window_s > 0; series_interval_s = 0 (no series) or >= window_s.
  LinkStats(const platform::PlatformHandles& h, double window_s, double series_interval_s);

  // Starts a transfer of `bytes` from `from` to `to` (bytes < 1: nothing is sent). max_rate_Bps > 0 bounds
  // its rate (a SimGrid variable bound: the flow takes at most that, less when links are shared).
  Handle start(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes, double max_rate_Bps = -1);
  // Waits for a transfer started by start() and credits its last bytes. Call once per handle.
  void wait(Handle handle);
  // start() + wait().
  void send(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes) { wait(start(from, to, bytes)); }
  size_t in_flight() const { return flows_.size() - free_.size(); }
  size_t peak_in_flight() const { return peak_in_flight_; }
  // Other activities in flight (compute, decode plans), counted into peak_activities().
  void count_other_in_flight(const int* n) { other_in_flight_ = n; }
  size_t peak_activities() const { return peak_activities_; }
  uint64_t transfers() const { return transfers_; }
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
  struct Route {
    std::vector<int> links;  // accounted links crossed, as indices of h_.links
    double sent = 0;         // sizes of the transfers started on it
  };
  struct Flow {
    simgrid::s4u::CommPtr comm;
    double size = 0;
    double credited = 0;
    Route* route = nullptr;
  };
  Route& route(simgrid::s4u::Host* from, simgrid::s4u::Host* to);
  void credit(Flow& f, double done);
  void sample(double now);

  const platform::PlatformHandles& h_;
  double window_s_;
  double series_interval_s_;
  std::map<const simgrid::s4u::Link*, int> link_index_;
  struct EndsHash {
    size_t operator()(const std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>& e) const {
      return std::hash<const void*>()(e.first) * 31 + std::hash<const void*>()(e.second);
    }
  };
  // Looked up per transfer; iteration order is never used, so a hash map is safe for determinism. Routes
  // live in route_list_ (stable addresses, creation order: sums over it are deterministic).
  std::unordered_map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, Route*, EndsHash> routes_;
  std::deque<Route> route_list_;
  double conservation_error_ = 0;
  std::vector<Flow> flows_;
  std::vector<Handle> free_;
  size_t peak_in_flight_ = 0;
  size_t peak_activities_ = 0;
  const int* other_in_flight_ = nullptr;
  uint64_t transfers_ = 0;
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
