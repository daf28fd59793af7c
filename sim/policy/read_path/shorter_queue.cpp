// `dualpath`: read on the side whose node has the shorter read queue (DualPath §6.1); ties go to the PE.
#include "sim/policy/read_path.h"

namespace sim::policy {
namespace {
class ShorterQueue : public ReadPathPolicy {
 public:
  ReadDecision choose(const RequestInfo&, const EngineLoad& pe, const EngineLoad& de,
                      const ClusterView& view) override {
    return {view.read_q[pe.node] <= view.read_q[de.node] ? 1.0 : 0.0, false};
  }
};
}  // namespace
std::unique_ptr<ReadPathPolicy> make_shorter_queue() {
  return std::make_unique<ShorterQueue>();
}
}  // namespace sim::policy
