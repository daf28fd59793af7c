#include "sim/cost/batch_quota.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace sim::cost {

QuotaBatchFormer::QuotaBatchFormer(const config::ModelSpec& m, const config::HardwareSpec& hw,
                                   const config::EngineSpec& e, const BatchLimits& limits)
    : m_(m), hw_(hw), e_(e), limits_(limits) {
  SIM_CHECK(limits.quota_s >= 0 && limits.hbm_bytes >= 0 && limits.hbm_bytes_per_token >= 0 &&
                limits.max_tokens >= 1,
            "batch limits: quota {} s, HBM {} B, {} B/token, {} tokens", limits.quota_s, limits.hbm_bytes,
            limits.hbm_bytes_per_token, limits.max_tokens);
  SIM_CHECK(limits.quota_layers >= 1, "batch limits: the quota covers {} layers", limits.quota_layers);
}

BatchLimits batch_limits(const config::PolicyConfig& p, const config::EngineSpec& e,
                         const config::ModelSpec& m) {
  BatchLimits limits;
  if (p.batching == "quota") {
    limits.quota_s = p.compute_quota_s;
    limits.quota_layers = p.quota_scope == "pass" ? m.layers : 1;
  }
  if (e.max_pass_tokens > 0) limits.max_tokens = e.max_pass_tokens;
  return limits;
}

double QuotaBatchFormer::attention_s() const {
  return attention_time_s(m_, hw_, e_, chunks_);
}

QuotaBatchFormer::Offer QuotaBatchFormer::offer(const Chunk& c) {
  SIM_CHECK(!closed_, "offer to a closed batch");
  SIM_CHECK(c.cached >= 0 && c.bsz >= 0, "chunk with negative tokens: cached {} bsz {}", c.cached, c.bsz);
  const double need = (c.cached + c.bsz) * limits_.hbm_bytes_per_token;
  if (!chunks_.empty() && hbm_ + need > limits_.hbm_bytes) {
    closed_ = true;
    bound_ = BatchBound::kHbm;
    return {Verdict::kRejected, 0};
  }
  // The largest pass: what is left of it (at least one token for a request alone).
  const double left = std::floor(limits_.max_tokens - tokens_);
  const double want = std::min(c.bsz, std::max(left, chunks_.empty() ? 1.0 : 0.0));
  // Predicted time of the batch plus `c` cut to `bsz` tokens: the quota's layers times the same sum as
  // attention_time_s(m, hw, e, chunks + {c.cached, bsz}), kept incremental so a batch of n requests costs
  // O(n) FLOP evaluations rather than O(n^2).
  auto predicted = [&](double bsz) {
    return limits_.quota_layers * attention_time_s(m_, hw_, e_, {c.cached, bsz});
  };
  auto fits = [&](double bsz) { return time_ + predicted(bsz) <= limits_.quota_s; };
  hbm_ += need;
  if (want >= c.bsz && fits(c.bsz)) {
    chunks_.push_back(c);
    time_ += predicted(c.bsz);
    tokens_ += c.bsz;
    return {Verdict::kWhole, c.bsz};
  }
  closed_ = true;
  // The engine's largest pass cut it when what is left of the pass fits the quota; else the quota did.
  bound_ = want < c.bsz && fits(want) ? BatchBound::kTokens : BatchBound::kQuota;
  // Largest bsz' <= want that fits; attention time grows with bsz, fits(lo) and !fits(hi) hold throughout.
  double lo = 0, hi = want;
  if (fits(want)) lo = hi = want;
  while (hi - lo > 1) {
    const double mid = std::floor((lo + hi) / 2);
    (fits(mid) ? lo : hi) = mid;
  }
  if (lo < 1 && !chunks_.empty()) return {Verdict::kRejected, 0};
  const double bsz = std::min(c.bsz, std::max(1.0, lo));  // alone: at least one token
  chunks_.push_back({c.cached, bsz});
  time_ += predicted(bsz);
  tokens_ += bsz;
  return {bsz < c.bsz ? Verdict::kChunked : Verdict::kWhole, bsz};
}

QuotaBatch form_quota_batch(const std::vector<Chunk>& candidates, const config::ModelSpec& m,
                            const config::HardwareSpec& hw, const config::EngineSpec& e,
                            const BatchLimits& limits) {
  QuotaBatchFormer former(m, hw, e, limits);
  QuotaBatch out;
  for (const Chunk& c : candidates) {
    const QuotaBatchFormer::Offer o = former.offer(c);
    if (o.verdict == QuotaBatchFormer::Verdict::kWhole) out.whole++;
    if (o.verdict == QuotaBatchFormer::Verdict::kChunked) out.chunk_bsz = o.bsz;
    if (former.closed()) break;
  }
  return out;
}

}  // namespace sim::cost
