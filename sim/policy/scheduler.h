// Inter-engine scheduler policies: which PE and which DE serve a request.
#pragma once

#include <memory>

#include "sim/policy/view.h"

namespace sim::policy {

struct Placement {
  int pe = 0;  // index into ClusterView::pes
  int de = 0;  // index into ClusterView::des
};

class SchedulerPolicy {
 public:
  virtual ~SchedulerPolicy() = default;
  // REQUIRES: view has at least one PE and one DE.
  virtual Placement place(const RequestInfo& r, const ClusterView& view) = 0;
};

}  // namespace sim::policy
