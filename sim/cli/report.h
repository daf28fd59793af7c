// Human-readable tables of results JSONs (stdout of `dpsim run` and `dpsim demo`).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sim::cli {

// A short table of one run: JCT, latencies, bottleneck, utilisation per resource class.
std::string summary_table(const nlohmann::json& results);

// Runs side by side (columns titled by `names`): JCT, bottleneck, SNIC/CNIC/DRAM/GPU utilisation.
std::string compare_table(const std::vector<std::string>& names, const std::vector<nlohmann::json>& results);

}  // namespace sim::cli
