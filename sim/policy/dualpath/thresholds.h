// The constants of Algorithm 1 (DualPath §6.1, §A.4; PAPER.md §5.2), derived from the node, engine and
// model files. The paper defines them in time ("tokens that can be read in 3 seconds", "tokens one GPU
// can process in 5 seconds") and profiles them in advance; it gives no token values. Units: tokens.
// Scenario keys policy.alpha_tokens / policy.beta_tokens override them (0 = derived): see
// resolve_threshold.
#pragma once

#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/cost/compute_model.h"

namespace sim::policy::dualpath {

constexpr double kAlphaWindowS = 3.0;  // alpha: read time of a "short" read queue (paper §6.1)
constexpr double kBetaWindowS = 5.0;   // beta: prefill time of the unfinished-token cap (paper §6.1)

// The typical request beta is measured on, when the caller has no workload statistics: the paper's own
// coding trace (§3; PAPER.md §1): average context 32.7k tokens (all hit), append 429 tokens (all miss).
// The context is taken as 32,700 tokens exactly.
constexpr cost::Chunk kPaperTypicalTurn{32700, 429};

// Bytes/s one node reads from storage in blocks of `block_bytes` with the engine's storage client: what the
// platform builder gives a read, min(SNIC line rate, backend rate) (storage/read_rate.h; block_bytes <= 0:
// large blocks).
double storage_read_Bps(const config::HardwareSpec& hw, const config::EngineSpec& e, double block_bytes = 0);

// alpha = storage_read_Bps(hw, e, block) x window_s / kv_bytes_per_token(m): the hit tokens one node's read
// queue drains in window_s (all layers of a token are read together, in Full Blocks of `block_tokens`
// tokens; 0 = large blocks). REQUIRES: window_s > 0.
double alpha_tokens(const config::HardwareSpec& hw, const config::EngineSpec& e, const config::ModelSpec& m,
                    double window_s = kAlphaWindowS, double block_tokens = 0);

// beta = window_s x tokens(typical) / prefill_s(typical): the tok_e a PE GPU works off in window_s
// when its requests look like `typical`, where
//   tokens(typical)    = cached + bsz, in tok_e's unit (tok_e counts hit + miss tokens, pe_tokens);
//   prefill_s(typical) = layers x (attention_time_s({typical}) + linear_time_s(bsz) / prefill_efficiency
//                        + token_kernels_s(prefill, bsz)):
//                        the compute of the request's prefill on one GPU at the engine's
//                        kernels.prefill_efficiency (attention_time_s includes it), its experts sharded
//                        over `weight_shards` GPUs: the prefill unit's (config/units.h), or with 0 the
//                        model file's params.weight_shards.
// The per-layer batch overhead (prefill_layer_overhead_s) is left out: it is paid once per forward batch
// and shared by all of the batch's requests, so it is not a per-request cost. Pass the workload's mean
// (hit, miss) per turn as `typical` to fit beta to a trace. REQUIRES: typical.bsz > 0, window_s > 0.
double beta_tokens(const config::HardwareSpec& hw, const config::EngineSpec& e, const config::ModelSpec& m,
                   const cost::Chunk& typical = kPaperTypicalTurn, double window_s = kBetaWindowS,
                   int weight_shards = 0);

// `configured` when > 0 (a scenario override), else `derived`.
inline double resolve_threshold(double configured, double derived) {
  return configured > 0 ? configured : derived;
}

}  // namespace sim::policy::dualpath
