#include "sim/policy/pd_guard.h"

#include <utility>

#include "sim/core/check.h"

namespace sim::policy {

PdGuard::PdGuard(std::unique_ptr<ReadPathPolicy> inner, const cost::LivePoint* live,
                 double kv_bytes_per_token)
    : inner_(std::move(inner)), live_(live), kv_token_(kv_bytes_per_token) {
  SIM_CHECK(inner_ != nullptr && live_ != nullptr && kv_token_ > 0, "PdGuard: bad arguments");
}

ReadDecision PdGuard::choose(const RequestInfo& r, const EngineLoad& pe, const EngineLoad& de,
                             const ClusterView& view) {
  ReadDecision d = inner_->choose(r, pe, de, view);
  if (d.zero_cost || r.hit_tokens <= 0) return d;
  counters_.decisions++;
  if (!live_->valid || live_->inside) return d;
  const double pe_share = 1 - live_->share.de_share;
  const double moved = (d.pe_fraction - pe_share) * r.hit_tokens * kv_token_;
  if (moved == 0) return d;
  counters_.steered++;
  (moved > 0 ? counters_.bytes_to_de_path : counters_.bytes_to_pe_path) += moved > 0 ? moved : -moved;
  d.pe_fraction = pe_share;
  return d;
}

}  // namespace sim::policy
