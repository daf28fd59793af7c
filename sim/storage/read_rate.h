// What one node's storage client reaches (pure): the backend rate behind the SNIC that the platform
// builder gives the storage link. The engine's 3FS-like client streams large blocks at its
// `storage.efficiency` of the node's SNIC line rate (3FS publishes its KVCache clients' peak,
// models/engine/README.md) and pays `storage.request_overhead_s` per block it reads or writes, so a block of
// B bytes moves at
//   rate(B) = E x B / (B + E x t)   with E = efficiency x SNIC rate and t = the overhead per block,
// the rate of one request stream whose per-block cost is B / E + t. Full Blocks (all layers of
// policy.persist_block_tokens tokens) are what dpsim reads and writes (DualPath §4.1).
// An explicit storage.bw_per_node_Bps of the node file (the storage cluster's share per node) replaces all
// of this.
#pragma once

#include "sim/config/engine.h"
#include "sim/config/hardware.h"

namespace sim::storage {

// Bytes/s of the storage backend of one node for blocks of `block_bytes` (<= 0: large blocks, no
// per-block cost); 0 = no backend link (the SNIC alone sets the rate).
inline double backend_Bps(const config::HardwareSpec& hw, const config::EngineSpec& client,
                          double block_bytes) {
  if (hw.storage_bw_per_node_Bps > 0) return hw.storage_bw_per_node_Bps;
  const double e = client.storage_efficiency * hw.snic_bw_Bps;
  if (block_bytes <= 0 || client.storage_request_overhead_s <= 0)
    return client.storage_efficiency < 1 ? e : 0;
  return e * block_bytes / (block_bytes + e * client.storage_request_overhead_s);
}

// What a node reads at: min(SNIC line rate, backend).
inline double read_Bps(const config::HardwareSpec& hw, const config::EngineSpec& client, double block_bytes) {
  const double b = backend_Bps(hw, client, block_bytes);
  return b > 0 && b < hw.snic_bw_Bps ? b : hw.snic_bw_Bps;
}

}  // namespace sim::storage
