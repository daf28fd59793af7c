// LiveRange: the bottleneck-free P/D range and the best DE-path share (cost/live_range.h) at the live node
// roles and link bandwidths, recomputed whenever either changes: at the start, each time the EventRunner
// applies or restores a link_degrade, and whenever a role change calls update(). The policy.pd_guard
// decorator (policy/pd_guard.h) reads current().
//
// Per side (the nodes whose live role is prefill, or decode) the analysis takes one bandwidth per
// resource, from SimGrid's current Link::get_bandwidth():
//   SNIC (direction in): the MEAN over the side's nodes. The reads of a side are spread over its nodes by
//     their read queues, so a slower SNIC takes fewer of them: the side's SNIC capacity is the sum, P times
//     the mean, which is what the analysis's P·sB_pe stands for.
//   CNIC read, CNIC write, DRAM, and g (the GPUs per node): the MINIMUM over the side's CNICs (per
//   direction) or nodes (a side's nodes have one g: a node keeps its hardware, and its role with two files).
//   Their traffic
//     follows the requests placed on each GPU, which the schedulers balance by tokens, not by bandwidth,
//     and a forward pass or decode step of a lock-step group moves at its slowest member: with a balanced
//     load the slowest one saturates first.
// Line rates, as `dpsim bottleneck`: the storage backend link and PCIe links are not in the analysis. A
// side with no node takes the other side's bandwidths (the point is then not valid: P or D is 0).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/config/de_buffer.h"
#include "sim/cost/live_range.h"
#include "sim/platform/handles.h"

namespace sim::control {

class LiveRange {
 public:
  // `roles`: each node's live role, indexed as h.nodes; read at every update (a role controller changes
  // it, then calls update()). REQUIRES: h and roles outlive the monitor; roles.size() == h.nodes.size().
  // Computes the first point (t = 0, why "start").
  LiveRange(const platform::PlatformHandles& h, const std::vector<platform::NodeRole>& roles,
            config::DeBuffer de_buffer);

  // Nodes to leave out (non-zero: a draining node, which takes no new request of either role, or a node
  // that is down), indexed as h.nodes; one list per call, each kept. REQUIRES: they outlive the monitor.
  void exclude(const std::vector<char>* nodes) { excluded_.push_back(nodes); }

  // Recomputes the live point at simulated time `now` and records it with `why`.
  void update(double now, const char* why);

  // The latest point; its address is stable for the monitor's life.
  const cost::LivePoint& current() const { return current_; }
  size_t updates() const { return series_.size(); }

  // The recorded points, in order: {t_s, why, P, D, pd, pd_min, pd_max, feasible, inside, binding,
  // de_share, de_share_lo, de_share_hi, rate_Bps, bandwidths: {prefill, decode}}.
  nlohmann::json to_json() const { return series_; }

 private:
  cost::SidedInputs measure(double* P, double* D) const;
  bool excluded(int node) const {
    for (const auto* v : excluded_)
      if ((*v)[node] != 0) return true;
    return false;
  }

  const platform::PlatformHandles& h_;
  const std::vector<platform::NodeRole>& roles_;
  std::vector<const std::vector<char>*> excluded_;
  config::DeBuffer de_buffer_;
  cost::LivePoint current_;
  nlohmann::json series_ = nlohmann::json::array();
};

}  // namespace sim::control
