// `dpsim compare` and the side-by-side table of results JSONs that `dpsim demo` prints too.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// Runs side by side (columns titled by `names`): JCT, bottleneck, SNIC/CNIC/DRAM/GPU utilisation.
std::string compare_table(const std::vector<std::string>& names, const std::vector<nlohmann::json>& results);

// The metrics (lower is better: summary.jct_s, ttft_s mean and p99, tpot_s mean) in which B exceeds A by
// more than `tolerance` (a fraction, 0.02 = 2%), one line each with both values; empty = not worse.
std::vector<std::string> worse_metrics(const nlohmann::json& a, const nlohmann::json& b, double tolerance);

// The command's options, as given.
struct CompareSpec {
  std::string a, b;      // results JSONs: the reference and the candidate
  double tolerance = 2;  // percent by which B may be worse
};

// compare_table of A and B, then each metric in which B is worse beyond the tolerance; the verdict fails
// when there is one.
StatusOr<Outcome> run_compare(const CompareSpec& spec);

}  // namespace sim::study
