// The PE's forward-batch former under the compute quota (DualPath §6.2, Fig. 6; PAPER.md §5.5). Pure.
// Requests are offered in FIFO order as (cached, bsz) chunks, bsz = tokens still to prefill. A request
// joins whole while the batch's predicted attention time stays within the quota; the first that would
// exceed it is cut to the largest bsz' that fits (binary search) and runs as a chunked prefill, closing the
// batch. The predictor is the engine's own attention pricing (attention_time_s, one layer averaged over the
// model's layers) times the layers the quota covers: the whole pass (policy.quota_scope = pass, the default:
// the reading under which the quota binds) or one layer (layer). A request alone in the batch always gets
// >= 1 token, so an oversized head still makes progress. An optional HBM cap bounds the KV resident for the
// batch, and the engine's largest pass (EngineSpec::max_pass_tokens) the new tokens: a request that would
// pass it is cut to what is left and closes the batch. Units: seconds (quota), bytes (HBM), tokens.
#pragma once

#include <limits>
#include <vector>

#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/config/scenario.h"
#include "sim/cost/compute_model.h"

namespace sim::cost {

struct BatchLimits {
  // Predicted attention time per batch (the compute quota; DualPath §A.4: 0.3 s), over `quota_layers`
  // layers. Infinity = no quota: every offered request joins whole (subject to HBM).
  double quota_s = std::numeric_limits<double>::infinity();
  // HBM bytes the batch's KV may occupy, and the bytes each token of a request occupies (a request needs
  // (cached + bsz) x hbm_bytes_per_token, counted with its whole remaining bsz even when chunked). The
  // first request always joins. Infinity = no HBM cap.
  double hbm_bytes = std::numeric_limits<double>::infinity();
  double hbm_bytes_per_token = 0;
  // New tokens (bsz) the batch may hold (the engine's largest pass). Infinity = no cap.
  double max_tokens = std::numeric_limits<double>::infinity();
  // The layers the quota's prediction covers: the model's layers (the whole pass) or 1 (one layer).
  double quota_layers = 1;
};

// The limits of a prefill GPU's batch under a scenario's policy (policy.batching, compute_quota_s,
// quota_scope) and its engine's largest pass; the HBM cap is the caller's (it depends on the EP group).
BatchLimits batch_limits(const config::PolicyConfig& p, const config::EngineSpec& e,
                         const config::ModelSpec& m);

// What closed a batch: nothing (the offered requests ran out), the compute quota, the engine's largest pass
// (max_tokens) or the HBM cap.
enum class BatchBound { kNone, kQuota, kTokens, kHbm };

// Incremental form, for a caller that decides per request whether to offer it (e.g. skips requests whose
// DE buffer is full). After a kChunked or kRejected answer the batch is closed.
class QuotaBatchFormer {
 public:
  enum class Verdict {
    kWhole,     // joins with all of its bsz
    kChunked,   // joins with bsz' < bsz (or 1 token when alone); the batch is closed
    kRejected,  // does not join (HBM, or not even one token fits the quota); the batch is closed
  };
  struct Offer {
    Verdict verdict = Verdict::kRejected;
    double bsz = 0;  // the tokens it joins with (0 when rejected)
  };

  // REQUIRES: limits.quota_s >= 0, limits.hbm_bytes >= 0, limits.hbm_bytes_per_token >= 0,
  // limits.max_tokens >= 1. m, hw and e must outlive the former.
  QuotaBatchFormer(const config::ModelSpec& m, const config::HardwareSpec& hw, const config::EngineSpec& e,
                   const BatchLimits& limits);

  // Offers the next request. REQUIRES: !closed(); c.cached >= 0, c.bsz >= 0.
  Offer offer(const Chunk& c);
  bool closed() const { return closed_; }
  // What closed the batch (kNone while it is open).
  BatchBound closed_by() const { return bound_; }
  // The chunks of the batch so far, as they join (a chunked one with its cut bsz).
  const std::vector<Chunk>& chunks() const { return chunks_; }
  // attention_time_s(m, hw, e, chunks()): one layer.
  double attention_s() const;
  // The quota's measure of the batch so far: attention_s() over limits.quota_layers layers.
  double predicted_s() const { return time_; }

 private:
  const config::ModelSpec& m_;
  const config::HardwareSpec& hw_;
  const config::EngineSpec& e_;
  BatchLimits limits_;
  std::vector<Chunk> chunks_;
  double time_ = 0;  // sum of quota_layers x attention_time_s over chunks_, in order
  double hbm_ = 0;
  double tokens_ = 0;  // new tokens of chunks_
  bool closed_ = false;
  BatchBound bound_ = BatchBound::kNone;
};

struct QuotaBatch {
  int whole = 0;         // candidates[0 .. whole) join with all of their bsz
  double chunk_bsz = 0;  // > 0: candidates[whole] joins chunked with this bsz; 0: no chunked request
  int size() const { return whole + (chunk_bsz > 0 ? 1 : 0); }
};

// The batch formed from `candidates` (FIFO, index 0 first): QuotaBatchFormer::offer over them in order
// until the batch closes or they run out.
QuotaBatch form_quota_batch(const std::vector<Chunk>& candidates, const config::ModelSpec& m,
                            const config::HardwareSpec& hw, const config::EngineSpec& e,
                            const BatchLimits& limits);

}  // namespace sim::cost
