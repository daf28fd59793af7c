#include "sim/metrics/storage_summary.h"

#include <algorithm>

#include "sim/core/series_bound.h"

namespace sim::metrics {

nlohmann::json storage_summary(const config::ScenarioConfig& sc, const storage::PrefixStore& st,
                               const engine::Recorder& rec, double kv_token, double series_interval_s) {
  const auto& n = st.counters();
  std::vector<double> asked, served;
  for (const auto& [a, s] : st.series()) {
    asked.push_back(a);
    served.push_back(s);
  }
  const size_t f = core::merge_factor(st.series_interval_s(), series_interval_s);
  asked = core::merge_points(asked, f, false);
  served = core::merge_points(served, f, false);
  nlohmann::json series = nlohmann::json::array();
  for (size_t k = 0; k < asked.size(); ++k)
    series.push_back(asked[k] > 0 ? nlohmann::json(served[k] / asked[k]) : nlohmann::json());
  return {{"capacity_bytes", st.limited() ? nlohmann::json(sc.storage.capacity_bytes) : nlohmann::json()},
          {"eviction", st.limited() ? nlohmann::json(sc.storage.eviction) : nlohmann::json()},
          {"hit_rate", n.asked_tokens > 0 ? n.served_tokens / n.asked_tokens : 1.0},
          {"recomputed_tokens", rec.recomputed_tokens},
          {"evicted_bytes", n.evicted_tokens * kv_token},
          {"evictions", n.evictions},
          {"stored_bytes_peak", n.peak_stored_tokens * kv_token},
          {"stored_bytes_end", n.stored_tokens * kv_token},
          {"hit_rate_series", series},
          {"series_interval_s", series_interval_s}};
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
