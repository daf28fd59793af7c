// PdGuard (policy.pd_guard = on): a read-path policy wrapped so that the read split follows the live
// bottleneck analysis (sim/cost/live_range.h). While the live P/D lies inside the live bottleneck-free range
// it passes the wrapped policy's decision through unchanged; outside (or with an empty range) it reads the
// share f* of each request's hit KV through the DE node and 1 - f* through the PE node, the share that
// admits the highest hit-KV read rate with no CNIC, DRAM or SNIC over its capacity. Oracle decisions (free
// transport) and requests with no hit pass through. Pure: it sees the live state through a pointer that
// the simulator's monitor (control/live_range.h) keeps current.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/cost/live_range.h"
#include "sim/policy/read_path.h"

namespace sim::policy {

class PdGuard : public ReadPathPolicy {
 public:
  struct Counters {
    int64_t decisions = 0;  // requests with hit KV on the links that the guard saw
    int64_t steered = 0;    // of them, those whose PE share it changed
    // Hit-KV bytes (hit tokens x KV bytes per token) whose read side it changed: PE path -> DE path, and
    // DE path -> PE path.
    double bytes_to_de_path = 0;
    double bytes_to_pe_path = 0;
  };

  // REQUIRES: `live` outlives the guard; kv_bytes_per_token > 0.
  PdGuard(std::unique_ptr<ReadPathPolicy> inner, const cost::LivePoint* live, double kv_bytes_per_token);

  ReadDecision choose(const RequestInfo& r, const EngineLoad& pe, const EngineLoad& de,
                      const ClusterView& view) override;

  const Counters& counters() const { return counters_; }

 private:
  std::unique_ptr<ReadPathPolicy> inner_;
  const cost::LivePoint* live_;
  double kv_token_;
  Counters counters_;
};

}  // namespace sim::policy
