#include "sim/engine/forward_pass.h"

#include <algorithm>

#include "sim/core/check.h"
#include "sim/engine/sg_compat.h"

namespace sim::engine {

double& Flows::operator[](Ends ends) {
  for (auto& f : flows_)
    if (f.first == ends) return f.second;
  flows_.emplace_back(ends, 0.0);
  return flows_.back().second;
}

namespace {

using Handles = std::vector<transport::Transport::Handle>;

// Starts `layers` layers' worth of every flow; max_rate_per_layer > 0 bounds each flow to its per-layer
// bytes times that rate (layers per second).
void start_all(transport::Transport& links, const Flows& flows, double layers, Handles& out,
               double layers_per_s = -1, transport::TrafficClass c = transport::TrafficClass::kKv) {
  for (const auto& [ends, bytes] : flows) {
    const double total = bytes * layers;
    if (total >= 1) out.push_back(links.start(ends.first, ends.second, total, c, bytes * layers_per_s));
  }
}

// The EP exchange over the CNICs of `layers` layers computed now: one flow per endpoint, paced at one layer
// per layer time (the compute it overlaps); those layers end when it has.
void start_exchange(transport::Transport& links, const ForwardPass& fp, double layers, Handles& out) {
  if (fp.exchange == nullptr) return;
  start_all(links, *fp.exchange, layers, out, fp.t_layer > 0 ? 1 / fp.t_layer : -1,
            transport::TrafficClass::kCollective);
}

// A transfer fails only when a node of its route failed (transport.h, cut()): the pass goes on to its end,
// and its service learns of the failure from the membership (prefill_service.cpp).
void wait_all(transport::Transport& links, Handles& handles) {
  for (auto hd : handles) links.wait(hd);
  handles.clear();
}

void run_whole(transport::Transport& links, const ForwardPass& fp, PassCompute& compute) {
  Handles h, exchange;
  start_all(links, fp.load, fp.layers, h);
  wait_all(links, h);
  start_exchange(links, fp, fp.layers, exchange);
  compute.run(fp.layers);
  start_all(links, fp.push, fp.layers, h);
  wait_all(links, h);
  wait_all(links, exchange);
}

void run_groups(transport::Transport& links, const ForwardPass& fp, int per_group, PassCompute& compute) {
  Handles loading, pushing, exchange;
  start_all(links, fp.load, std::min(per_group, fp.layers), loading);
  wait_all(links, loading);
  for (int first = 0; first < fp.layers; first += per_group) {
    const int layers = std::min(per_group, fp.layers - first);
    const int next = std::min(per_group, fp.layers - first - layers);
    if (next > 0) start_all(links, fp.load, next, loading);
    start_exchange(links, fp, layers, exchange);
    compute.run(layers);
    wait_all(links, exchange);  // a layer's MoE needs its exchange
    start_all(links, fp.push, layers, pushing);
    wait_all(links, loading);
  }
  wait_all(links, pushing);
}

void run_fluid(transport::Transport& links, const ForwardPass& fp, PassCompute& compute) {
  const int n = fp.layers;
  if (n < 2 || fp.t_layer <= 0) {
    run_groups(links, fp, 1, compute);
    return;
  }
  // The loads and pushes run at what the links give them (no rate bound: a bound would keep them in the
  // max-min system for the whole pass, which costs twice the run time, and the fidelity check holds
  // without it); the exchange runs at the compute's pace.
  Handles loading, pushing, exchange;
  start_all(links, fp.load, n, loading);
  start_exchange(links, fp, n, exchange);
  compute.start(n - 1);           // layers 0 .. n-2
  engine::sleep_for(fp.t_layer);  // layer 0 computed: its KV goes out
  start_all(links, fp.push, n, pushing);
  compute.wait();
  wait_all(links, loading);  // the last layer needs all of its KV
  compute.run(1);            // layer n-1
  wait_all(links, pushing);
  wait_all(links, exchange);
}

}  // namespace

PassPipeline::PassPipeline(bool layerwise, int layer_group)
    : kind_(!layerwise         ? Kind::kWhole
            : layer_group == 0 ? Kind::kFluid
                               : Kind::kGroups),
      layer_group_(layer_group) {}

void PassPipeline::run(transport::Transport& t, const ForwardPass& fp, PassCompute& compute) const {
  switch (kind_) {
    case Kind::kWhole:
      return run_whole(t, fp, compute);
    case Kind::kGroups:
      return run_groups(t, fp, layer_group_, compute);
    case Kind::kFluid:
      return run_fluid(t, fp, compute);
  }
}

}  // namespace sim::engine
