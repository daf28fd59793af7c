// `least_tokens`: the PE and the DE with the fewest unfinished tokens (tok_e); ties go to the lower id.
#include "sim/policy/scheduler.h"

namespace sim::policy {
namespace {
int argmin_tok(const std::vector<EngineLoad>& es) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(es.size()); ++i)
    if (es[i].tok < es[best].tok) best = i;
  return best;
}
class LeastTokens : public SchedulerPolicy {
 public:
  Placement place(const RequestInfo&, const ClusterView& view) override {
    return {argmin_tok(view.pes), argmin_tok(view.des)};
  }
};
}  // namespace
std::unique_ptr<SchedulerPolicy> make_least_tokens() {
  return std::make_unique<LeastTokens>();
}
}  // namespace sim::policy
