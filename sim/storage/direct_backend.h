// DirectBackend: storage as the platform models it (platform/handles.h): a node's reads cross its SNIC
// (and the storage link behind it, when modelled) into its DRAM, or on through a decode GPU's CNIC into its
// HBM; its writes cross DRAM then the SNIC out.
// Every block is always there: no capacity, no eviction.
#pragma once

#include "sim/platform/handles.h"
#include "sim/storage/storage_backend.h"
#include "sim/transport/transport.h"

namespace sim::storage {

class DirectBackend : public StorageBackend {
 public:
  // REQUIRES: `h` and `t` outlive the backend.
  DirectBackend(const platform::PlatformHandles& h, transport::Transport& t) : h_(h), t_(t) {}
  Status read(int node, double bytes, double* sent = nullptr) override {
    return t_.wait(t_.start(h_.nodes[node].storage, h_.nodes[node].dram, bytes), sent);
  }
  // REQUIRES: `node` is a decode node (platform/handles.h: stores).
  Status read_to_gpu(int node, int gpu, double bytes) override {
    return t_.send(h_.nodes[node].stores[gpu], h_.nodes[node].gpus[gpu], bytes);
  }
  Status persist(int node, double bytes) override {
    return t_.send(h_.nodes[node].dram, h_.nodes[node].storage, bytes);
  }

 private:
  const platform::PlatformHandles& h_;
  transport::Transport& t_;
};

}  // namespace sim::storage
