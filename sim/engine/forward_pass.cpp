#include "sim/engine/forward_pass.h"

#include <algorithm>

#include "sim/engine/sg_compat.h"

namespace sim::engine {

namespace {

using Handles = std::vector<metrics::LinkStats::Handle>;

// Starts `layers` layers' worth of every flow; max_rate_per_layer > 0 bounds each flow to its per-layer
// bytes times that rate (layers per second).
void start_all(metrics::LinkStats& links, const Flows& flows, double layers, Handles& out,
               double layers_per_s = -1) {
  for (const auto& [ends, bytes] : flows) {
    const double total = bytes * layers;
    if (total >= 1) out.push_back(links.start(ends.first, ends.second, total, bytes * layers_per_s));
  }
}

void wait_all(metrics::LinkStats& links, Handles& handles) {
  for (auto hd : handles) links.wait(hd);
  handles.clear();
}

}  // namespace

double& Flows::operator[](Ends ends) {
  for (auto& f : flows_)
    if (f.first == ends) return f.second;
  flows_.emplace_back(ends, 0.0);
  return flows_.back().second;
}

void run_whole(metrics::LinkStats& links, const ForwardPass& fp, const ComputeFn& compute) {
  Handles h;
  start_all(links, fp.load, fp.layers, h);
  wait_all(links, h);
  compute(fp.t_layer * fp.layers);
  start_all(links, fp.push, fp.layers, h);
  wait_all(links, h);
}

void run_groups(metrics::LinkStats& links, const ForwardPass& fp, int per_group, const ComputeFn& compute) {
  Handles loading, pushing;
  start_all(links, fp.load, std::min(per_group, fp.layers), loading);
  wait_all(links, loading);
  for (int first = 0; first < fp.layers; first += per_group) {
    const int layers = std::min(per_group, fp.layers - first);
    const int next = std::min(per_group, fp.layers - first - layers);
    if (next > 0) start_all(links, fp.load, next, loading);
    compute(fp.t_layer * layers);
    start_all(links, fp.push, layers, pushing);
    wait_all(links, loading);
  }
  wait_all(links, pushing);
}

void run_fluid(metrics::LinkStats& links, const ForwardPass& fp, const ComputeFn& compute) {
  const int n = fp.layers;
  if (n < 2 || fp.t_layer <= 0) {
    run_groups(links, fp, 1, compute);
    return;
  }
  // n layers' bytes over the n - 1 layer times before the last layer needs its KV (the load) or after
  // layer 0 is computed (the push): the pace of a one-layer-ahead prefetch and of a per-layer push.
  const double pace = n / ((n - 1) * fp.t_layer);
  Handles loading, pushing;
  start_all(links, fp.load, n, loading, pace);
  compute(fp.t_layer);  // layer 0
  start_all(links, fp.push, n, pushing, pace);
  compute(fp.t_layer * (n - 2));  // layers 1 .. n-2
  wait_all(links, loading);       // the last layer needs all of its KV
  compute(fp.t_layer);            // layer n-1
  wait_all(links, pushing);
}

}  // namespace sim::engine
