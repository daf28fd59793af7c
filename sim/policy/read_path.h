// Read-path policies: once a request has its PE and DE, which side reads its hit KV from storage.
#pragma once

#include <memory>
#include <string>

#include "sim/policy/view.h"

namespace sim::policy {

struct ReadDecision {
  double pe_fraction = 1.0;  // share of the hit tokens read through the PE node (1 = PE path, 0 = DE path)
  bool zero_cost = false;    // Oracle: reads, H2D/D2H and P->D transfers take no time and carry no bytes
};

class ReadPathPolicy {
 public:
  virtual ~ReadPathPolicy() = default;
  virtual ReadDecision choose(const RequestInfo& r, const EngineLoad& pe, const EngineLoad& de,
                              const ClusterView& view) = 0;
};

}  // namespace sim::policy
