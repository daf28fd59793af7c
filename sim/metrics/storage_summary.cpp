#include "sim/metrics/storage_summary.h"

#include <algorithm>

namespace sim::metrics {

nlohmann::json storage_summary(const config::ScenarioConfig& sc, const storage::PrefixStore& st,
                               const engine::Recorder& rec, double kv_token) {
  const auto& n = st.counters();
  nlohmann::json series = nlohmann::json::array();
  for (const auto& [asked, served] : st.series())
    series.push_back(asked > 0 ? nlohmann::json(served / asked) : nlohmann::json());
  return {{"capacity_bytes", st.limited() ? nlohmann::json(sc.storage.capacity_bytes) : nlohmann::json()},
          {"eviction", st.limited() ? nlohmann::json(sc.storage.eviction) : nlohmann::json()},
          {"hit_rate", n.asked_tokens > 0 ? n.served_tokens / n.asked_tokens : 1.0},
          {"recomputed_tokens", rec.recomputed_tokens},
          {"evicted_bytes", n.evicted_tokens * kv_token},
          {"evictions", n.evictions},
          {"stored_bytes_peak", n.peak_stored_tokens * kv_token},
          {"stored_bytes_end", n.stored_tokens * kv_token},
          {"hit_rate_series", series},
          {"series_interval_s", sc.outputs.timeseries_interval_s}};
}

nlohmann::json dram_tier_summary(const config::ScenarioConfig& sc,
                                 const std::vector<storage::PrefixStore>& tiers, const engine::Recorder& rec,
                                 double kv_token) {
  if (tiers.empty()) return nullptr;
  double evicted = 0, peak = 0;
  for (const auto& t : tiers) {
    evicted += t.counters().evicted_tokens * kv_token;
    peak = std::max(peak, t.counters().peak_stored_tokens * kv_token);
  }
  const double asked = rec.dram_tier_asked_tokens, served = rec.dram_tier_served_tokens;
  return {{"bytes_per_node", sc.cache.dram_bytes},
          {"eviction", sc.cache.eviction},
          {"hit_rate", asked > 0 ? served / asked : 0.0},
          {"snic_bytes_saved", served * kv_token},
          {"evicted_bytes", evicted},
          {"stored_bytes_peak", peak}};
}

}  // namespace sim::metrics
