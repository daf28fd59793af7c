// What policies see: a snapshot of engine and node load. Policies never see the simulator.
// Units: tokens (tok, read_q), bytes (free_hbm).
#pragma once

#include <cstdint>
#include <vector>

namespace sim::policy {

struct EngineLoad {
  int id = 0;           // engine index within its role (PE or DE)
  int node = 0;         // node index (platform numbering: prefill nodes first)
  int seq = 0;          // requests assigned and not completed (seq_e)
  double tok = 0;       // tokens of those requests (tok_e): hit + miss for PEs, context + gen for DEs
  double free_hbm = 0;  // DEs: HBM bytes not yet promised to requests
};

struct ClusterView {
  double now = 0;
  std::vector<EngineLoad> pes;
  std::vector<EngineLoad> des;
  std::vector<double> read_q;  // per node: tokens queued or in flight for storage reads (read_q)
};

// One request as the policies see it.
struct RequestInfo {
  uint64_t id = 0;
  double hit_tokens = 0;   // context already in storage
  double miss_tokens = 0;  // appended tokens to prefill
  double gen_tokens = 0;
  // Of hit_tokens: the prefix held in the DRAM tier (cache.dram_bytes) of the PE's node and of the DE's node
  // (read-path policies only; 0 without a tier). A side reads from storage only what its tier lacks.
  double pe_cached_tokens = 0;
  double de_cached_tokens = 0;
};

}  // namespace sim::policy
