// `split`: one request's read split across both sides so that the two queues end as even as possible
// (the paper's future work, §6.1): PE share f = clamp((q_de - q_pe + hit) / (2 hit), 0, 1).
#include <algorithm>

#include "sim/policy/read_path.h"

namespace sim::policy {
namespace {
class Split : public ReadPathPolicy {
 public:
  ReadDecision choose(const RequestInfo& r, const EngineLoad& pe, const EngineLoad& de,
                      const ClusterView& view) override {
    if (r.hit_tokens <= 0) return {1.0, false};
    const double q_pe = view.read_q[pe.node], q_de = view.read_q[de.node];
    return {std::clamp((q_de - q_pe + r.hit_tokens) / (2 * r.hit_tokens), 0.0, 1.0), false};
  }
};
}  // namespace
std::unique_ptr<ReadPathPolicy> make_split() {
  return std::make_unique<Split>();
}
}  // namespace sim::policy
