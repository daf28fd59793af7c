// StorageBackend: where KV blocks live between turns (3FS-like distributed storage). Reads land in a
// node's DRAM (or a decode GPU's HBM through the DRAM) through its SNIC; persistence leaves a node's DRAM
// through its SNIC. How much of each agent's KV storage (or a node's DRAM tier) still holds is not the
// backend's: that is storage/prefix_store.h. A slower tier behind it (SSD) would be a backend of its own.
#pragma once

#include "sim/core/status.h"

namespace sim::storage {

class StorageBackend {
 public:
  virtual ~StorageBackend() = default;
  // Reads `bytes` of KV into node `node`'s DRAM; returns when they are there. A read whose node failed
  // returns an error, with the bytes it had read in `sent` (when given).
  virtual Status read(int node, double bytes, double* sent = nullptr) = 0;
  // Reads `bytes` of KV into the HBM of GPU `gpu` of decode node `node`, through the node's DRAM (crossed
  // once, the read's bounce buffer) and the GPU's CNIC (cluster.de_buffer = hbm); returns when they are
  // there.
  virtual Status read_to_gpu(int node, int gpu, double bytes) = 0;
  // Writes `bytes` of KV from node `node`'s DRAM to storage; returns when they are stored.
  virtual Status persist(int node, double bytes) = 0;
};

}  // namespace sim::storage
