// `pe`: Basic's only path: every hit token is read through the PE node's SNIC.
#include "sim/policy/read_path.h"

namespace sim::policy {
namespace {
class PeOnly : public ReadPathPolicy {
 public:
  ReadDecision choose(const RequestInfo&, const EngineLoad&, const EngineLoad&, const ClusterView&) override {
    return {1.0, false};
  }
};
}  // namespace
std::unique_ptr<ReadPathPolicy> make_pe_only() {
  return std::make_unique<PeOnly>();
}
}  // namespace sim::policy
