// `round_robin`: PEs and DEs taken in turn, independently.
#include "sim/policy/scheduler.h"

namespace sim::policy {
namespace {
class RoundRobin : public SchedulerPolicy {
 public:
  Placement place(const RequestInfo&, const ClusterView& view) override {
    Placement p{static_cast<int>(next_pe_ % view.pes.size()), static_cast<int>(next_de_ % view.des.size())};
    ++next_pe_;
    ++next_de_;
    return p;
  }

 private:
  uint64_t next_pe_ = 0;
  uint64_t next_de_ = 0;
};
}  // namespace
std::unique_ptr<SchedulerPolicy> make_round_robin() {
  return std::make_unique<RoundRobin>();
}
}  // namespace sim::policy
