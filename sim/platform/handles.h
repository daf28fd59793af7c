// PlatformHandles: the SimGrid hosts and links of a built cluster, by role. Non-owning: SimGrid owns them.
//
// One star zone holds every host. Each host's route to the star's centre lists the links a byte crosses
// (DESIGN.md, "The platform"); a transfer from X to Y crosses X's up-links then Y's down-links:
//   gpu  (n, j): up [cnic_j.read]                     down [cnic_j.write]
//   buf  (n, j): up [dram, cnic_j.read]               down [cnic_j.write, dram]    (DRAM reached via CNIC j)
//   dram (n)   : up [dram]                            down [dram]                  (DRAM reached by the SNIC)
//   store(n)   : up [snic.in]                         down [snic.out]              (the storage side of node
//   n)
//   store(n, j): up [snic.in, dram]                   (decode nodes: the storage side as GPU j's HBM sees it)
// so storage read = store->dram, H2D = buf_j->gpu_j, D2H = gpu_j->buf_j, GPU A -> DRAM B = gpuA->bufB_j,
// DRAM B -> GPU A = bufB_j->gpuA, persist = dram->store, storage read into GPU j's HBM through the DRAM
// (cluster.de_buffer = hbm) = store_j->gpu_j: SNIC in, DRAM, CNIC j write. With PCIe modelled, gpu_j's
// routes start with the GPU's PCIe link and buf_j's (and store_j's) with the host PCIe link of switch j.
// The compute fabric is non-blocking.
//
// Traffic classes under network.qos = priority (builder.cpp): each GPU has a second host, its collective
// endpoint `ep` (n, j), with the GPU's own routes, and every host's route up starts with a private QoS tag
// (its route down has none, so a transfer crosses its source's tag only): a link of unbounded bandwidth
// whose latency carries its class's weight. The model's collectives run
// ep -> ep, KV traffic between the hosts above. Tags are not resources: they are in `qos_tags`, not `links`.
//
// A node's EP exchange host `ex` (n) has a route to itself only: [every GPU j's up-links, every GPU j's
// down-links] (on a decode node behind a pace link, not a resource either), so one flow on it crosses each
// CNIC of the node once each way.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/platform/resource_class.h"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace sim::platform {

// A directed (or shared) link resource whose bytes are accounted.
struct TrackedLink {
  simgrid::s4u::Link* link = nullptr;
  ResourceClass resource = ResourceClass::kSnic;
  std::string
      direction;  // in/out (snic), read/write (cnic, storage), shared (dram), to_gpu/from_gpu... (pcie)
  int node = 0;
  int gpu = -1;  // GPU index within the node for per-GPU links, else -1
  double bandwidth_Bps = 0;
};

struct NodeHandles {
  NodeRole role = NodeRole::kPrefill;
  std::vector<simgrid::s4u::Host*> gpus;  // g GPU hosts
  std::vector<simgrid::s4u::Host*> bufs;  // g DRAM endpoints, one behind each CNIC
  simgrid::s4u::Host* dram = nullptr;     // DRAM endpoint behind the SNIC
  simgrid::s4u::Host* storage = nullptr;  // the storage side of this node
  // Decode nodes: g storage endpoints, one per GPU, whose transfers to GPU j land in its HBM through the
  // node's DRAM (store(n, j) above); empty on prefill nodes.
  std::vector<simgrid::s4u::Host*> stores;
  std::vector<simgrid::s4u::Host*> eps;  // g collective endpoints (network.qos = priority), else empty
  // The node's part of an EP exchange over whole nodes: a host whose route to itself crosses the links of
  // every GPU to its CNIC, out then back in (with the collectives' QoS tag under network.qos = priority).
  // A flow of B bytes on it loads each of the node's CNICs with B each way: every GPU's share of a
  // balanced all-to-all, at one pace, as a prefill pass or a decode group runs in lock-step. On a decode
  // node the route starts with a pace link that is not a resource (not in `links`; nullptr elsewhere).
  simgrid::s4u::Host* exchange = nullptr;
  simgrid::s4u::Link* exchange_pace = nullptr;
};

struct PlatformHandles {
  int prefill_nodes = 0;
  int decode_nodes = 0;
  // The GPUs of node n: its role's hardware file's gpus_per_node (the same on every node with one file).
  int gpus_on(int n) const { return static_cast<int>(nodes[n].gpus.size()); }
  // The engines of one role, one per GPU of its nodes: (node, gpu) pairs numbered node-major in platform
  // order; engine i of the role is the i-th pair.
  std::vector<std::pair<int, int>> engines_of(NodeRole role) const {
    std::vector<std::pair<int, int>> out;
    for (int n : nodes_of(role))
      for (int j = 0; j < gpus_on(n); ++j) out.emplace_back(n, j);
    return out;
  }
  // The GPUs of one role (the sum over its nodes).
  int gpus_of(NodeRole role) const { return static_cast<int>(engines_of(role).size()); }
  // The nodes of one role, in platform order.
  std::vector<int> nodes_of(NodeRole role) const {
    std::vector<int> out;
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n)
      if (nodes[n].role == role) out.push_back(n);
    return out;
  }
  std::vector<NodeHandles> nodes;  // in platform order (the builder puts prefill nodes first)
  // The host of the control actors (driver, stop rules, watchdog): on no node, so no node's failure or
  // role change takes them along. It has no link: control actors only sleep and notify.
  simgrid::s4u::Host* control = nullptr;
  std::vector<TrackedLink> links;             // every accounted link direction, in a stable order
  std::vector<simgrid::s4u::Link*> qos_tags;  // the QoS tags (not resources; empty without QoS)
};

}  // namespace sim::platform
