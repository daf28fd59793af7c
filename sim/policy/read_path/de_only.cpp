// `de`: every hit token is read through the DE node's SNIC (the storage -> decode path).
#include "sim/policy/read_path.h"

namespace sim::policy {
namespace {
class DeOnly : public ReadPathPolicy {
 public:
  ReadDecision choose(const RequestInfo&, const EngineLoad&, const EngineLoad&, const ClusterView&) override {
    return {0.0, false};
  }
};
}  // namespace
std::unique_ptr<ReadPathPolicy> make_de_only() {
  return std::make_unique<DeOnly>();
}
}  // namespace sim::policy
