// `dualpath`: read on the side whose node has the shorter read queue (DualPath §6.1); ties go to the PE.
// With DRAM tiers (cache.dram_bytes) a side's queue counts what it would read: the queue plus the hit
// less the prefix its node's tier holds, so a cached side is preferred unless its queue is longer by more
// than the tokens it saves. Without tiers both sides add the whole hit: the same choice.
#include "sim/policy/read_path.h"

namespace sim::policy {
namespace {
class ShorterQueue : public ReadPathPolicy {
 public:
  ReadDecision choose(const RequestInfo& r, const EngineLoad& pe, const EngineLoad& de,
                      const ClusterView& view) override {
    // (q_pe + hit - c_pe <= q_de + hit - c_de, with the hit taken out of both sides.)
    const double via_pe = view.read_q[pe.node] - r.pe_cached_tokens;
    const double via_de = view.read_q[de.node] - r.de_cached_tokens;
    return {via_pe <= via_de ? 1.0 : 0.0, false};
  }
};
}  // namespace
std::unique_ptr<ReadPathPolicy> make_shorter_queue() {
  return std::make_unique<ShorterQueue>();
}
}  // namespace sim::policy
