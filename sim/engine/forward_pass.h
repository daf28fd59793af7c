// One PE forward pass as transfers and compute: how the KV loads, the layers' compute and the KV pushes
// to the DE buffers overlap (layerwise prefill, DualPath §4). Three granularities, one knob
// (sim.layer_group, scenarios/README.md):
//   whole   (Basic, no layerwise)  load every layer's KV, compute every layer, push every layer's KV;
//   groups  (layer_group = k >= 1) layers in groups of k: group l+1's load overlaps group l's compute,
//                                  group l's push starts right after its compute; k = 1 is the finest;
//   fluid   (layer_group = 0)      the finest setting's pipeline as one flow per endpoint pair: the load
//                                  of all L layers starts with the compute and runs at what the links
//                                  give it; the last layer's compute waits for it to end (so a slow
//                                  network stalls the pass as it would layer by layer). The push of all L
//                                  layers starts after layer 0's compute, and the pass ends when both the
//                                  compute and the push have. Layers 0 .. L-2 are one execution per GPU,
//                                  the last layer another. What this leaves out: the pipeline fill
//                                  (layer 0's load before any compute) and drain (the last layer's push
//                                  after all compute), one layer's transfer each, about 1/L of a pass when
//                                  the network is not the bottleneck; and a load or push that runs ahead
//                                  of the compute takes link bandwidth earlier than layer by layer.
//                                  e2e:Fidelity bounds the difference (3%).
// Transfers per pass per endpoint pair: 1 (whole), ceil(L/k) (groups), 1 (fluid); plus, for an EP model
// whose group spans nodes, one EP exchange flow (per group of k layers) per node of the pass's DP group, or
// per GPU when the DP group is smaller than a node.
#pragma once

#include <utility>
#include <vector>

#include "sim/transport/transport.h"

namespace sim::engine {

// Bytes per layer per (source, destination) host, in first-use order: the order comms start in must
// not depend on pointer values, or runs would differ from one process to the next.
class Flows {
 public:
  using Ends = std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>;
  double& operator[](Ends ends);
  auto begin() const { return flows_.begin(); }
  auto end() const { return flows_.end(); }

 private:
  std::vector<std::pair<Ends, double>> flows_;
};

// The pass's compute on its GPUs (the engine runs the plan's work for a number of layers).
class PassCompute {
 public:
  virtual ~PassCompute() = default;
  // Computes `layers` layers; returns when they are done.
  virtual void run(double layers) = 0;
  // Starts `layers` layers and returns at once; wait() returns when they are done.
  virtual void start(double layers) = 0;
  virtual void wait() = 0;
};

struct ForwardPass {
  const Flows& load;   // KV bytes per layer to bring to the GPU, per source
  const Flows& push;   // KV bytes per layer to send to DE buffers, per destination
  double t_layer = 0;  // compute time of one layer (s): the pace of the fluid pipeline's transfers
  int layers = 1;
  // EP exchange bytes per layer per endpoint (a node's exchange host or a GPU, from itself to itself), a
  // collective over the CNICs (nullptr = none); it runs
  // beside the compute at its pace, whatever the granularity, and the pass ends when it has.
  const Flows* exchange = nullptr;
};

// How a pass's transfers and compute overlap: chosen once per run from policy.layerwise and
// sim.layer_group (the header comment above).
class PassPipeline {
 public:
  PassPipeline() = default;
  PassPipeline(bool layerwise, int layer_group);
  void run(transport::Transport& t, const ForwardPass& fp, PassCompute& compute) const;

 private:
  enum class Kind { kWhole, kGroups, kFluid } kind_ = Kind::kWhole;
  int layer_group_ = 1;
};

}  // namespace sim::engine
