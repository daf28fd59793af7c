// Builds the SimGrid platform of a P x D cluster from a hardware file per role (see handles.h for the
// routes).
#pragma once

#include <vector>

#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/platform/handles.h"

namespace sim::platform {

// The storage client behind every node's SNIC (storage/read_rate.h): the engine's, reading and writing
// blocks of `block_bytes` (0 = large blocks). Without an engine the client reaches the SNIC's line rate,
// unless the node file caps the storage (storage.bw_per_node_Bps).
struct StorageClient {
  const config::EngineSpec* engine = nullptr;
  double block_bytes = 0;
};

// Sets the network model for exact byte and time accounting (CM02, no cross-traffic, raised TCP gamma),
// creates the zone, hosts and links, and seals the platform. With `class_weights` (network.qos =
// priority) the traffic classes share links by the hardware's qos weights (handles.h).
// REQUIRES: a simgrid::s4u::Engine exists and no platform was loaded yet; prefill_nodes, decode_nodes >= 1;
// with class_weights, hw.link_latency_s == 0 (checked by the scenario loader). `storage`: the storage client
// that sets each node's storage link (storage/read_rate.h). `paced`: prefill
// nodes that may serve decode later (a role change): they get a decode node's exchange pace link too.
// Each prefill node is built from `prefill_hw` (its GPUs, CNICs, SNIC, DRAM, PCIe, storage backend, link
// latency), each decode node from `decode_hw`; the QoS weights are prefill_hw's (REQUIRES: both files' agree
// with class_weights, checked by the scenario loader). A paced prefill node's pace link runs at its own CNIC
// rate (paced nodes exist only with one file: a node keeps its hardware when it changes role).
PlatformHandles build_platform(const config::HardwareSpec& prefill_hw, const config::HardwareSpec& decode_hw,
                               int prefill_nodes, int decode_nodes, bool class_weights = false,
                               const StorageClient& storage = {}, const std::vector<int>& paced = {});
// Every node from `hw`.
inline PlatformHandles build_platform(const config::HardwareSpec& hw, int prefill_nodes, int decode_nodes,
                                      bool class_weights = false, const StorageClient& storage = {},
                                      const std::vector<int>& paced = {}) {
  return build_platform(hw, hw, prefill_nodes, decode_nodes, class_weights, storage, paced);
}

}  // namespace sim::platform
