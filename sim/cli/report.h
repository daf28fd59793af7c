// The human-readable table of a results JSON (stdout of `dpsim run`; runs side by side: study/compare.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sim::cli {

// A short table of one run: JCT, latencies, bottleneck, utilisation per resource class.
std::string summary_table(const nlohmann::json& results);

}  // namespace sim::cli
