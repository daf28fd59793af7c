// summary.storage and summary.dram_tier: the KV tiers a run read from, in bytes. Pure: no SimGrid.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/engine/recorder.h"
#include "sim/storage/prefix_store.h"

namespace sim::metrics {

// storage: the KV tier in storage (storage.capacity_bytes; sim/storage/prefix_store.h), in bytes.
//   hit_rate            context tokens found stored / context tokens asked for, over every turn issued
//   recomputed_tokens   context tokens of completed turns that storage had given up, computed again
//   evicted_bytes       given up to fit the capacity; evictions: prefixes trimmed
//   stored_bytes_peak   the most it held (unlimited: the agents' working set); stored_bytes_end at the end
//   hit_rate_series     hit_rate of the turns issued in each series interval (null: none issued)
nlohmann::json storage_summary(const config::ScenarioConfig& sc, const storage::PrefixStore& st,
                               const engine::Recorder& rec, double kv_token, double series_interval_s);

// dram_tier: the KV tier in each node's DRAM (cache.dram_bytes), null without one.
//   hit_rate              hit tokens taken from a DRAM tier / hit tokens, over the turns placed (Oracle's
//                         free transport left out)
//   snic_bytes_saved      the storage reads (SNIC bytes) those tokens did not need
//   evicted_bytes         given up to fit, over every node; stored_bytes_peak: the fullest node's most
nlohmann::json dram_tier_summary(const config::ScenarioConfig& sc,
                                 const std::vector<storage::PrefixStore>& tiers, const engine::Recorder& rec,
                                 double kv_token);

}  // namespace sim::metrics
