#include "sim/policy/dualpath/thresholds.h"

#include <algorithm>

#include "sim/core/check.h"
#include "sim/storage/read_rate.h"

namespace sim::policy::dualpath {

double storage_read_Bps(const config::HardwareSpec& hw, const config::EngineSpec& e, double block_bytes) {
  return storage::read_Bps(hw, e, block_bytes);
}

double alpha_tokens(const config::HardwareSpec& hw, const config::EngineSpec& e, const config::ModelSpec& m,
                    double window_s, double block_tokens) {
  SIM_CHECK(window_s > 0, "alpha window {} s <= 0", window_s);
  const double per_token = cost::kv_bytes_per_token(m);
  SIM_CHECK(per_token > 0, "model {}: no KV bytes per token", m.name);
  return storage_read_Bps(hw, e, per_token * block_tokens) * window_s / per_token;
}

double beta_tokens(const config::HardwareSpec& hw, const config::EngineSpec& e, const config::ModelSpec& m,
                   const cost::Chunk& typical, double window_s, int weight_shards) {
  SIM_CHECK(window_s > 0, "beta window {} s <= 0", window_s);
  SIM_CHECK(typical.bsz > 0 && typical.cached >= 0, "typical request cached {} bsz {}", typical.cached,
            typical.bsz);
  const double prefill_s =
      m.layers *
      (cost::attention_time_s(m, hw, e, {typical}) +
       cost::linear_time_s(m, hw, e, typical.bsz, weight_shards > 0 ? weight_shards : m.weight_shards) /
           e.k_prefill_efficiency +
       cost::token_kernels_s(e, cost::Phase::kPrefill, typical.bsz));
  return window_s * (typical.cached + typical.bsz) / prefill_s;
}

}  // namespace sim::policy::dualpath
