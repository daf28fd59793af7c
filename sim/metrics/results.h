// Pure helpers that turn recorded samples into the results JSON's views.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "sim/engine/recorder.h"

namespace sim::metrics {

// {mean, p50, p90, p99, max} of `xs` (nearest-rank percentiles); zeros when empty.
nlohmann::json distribution(std::vector<double> xs);

// summary.ttft_s / ttst_s / tpot_s / ttft_breakdown_s from the per-turn samples.
nlohmann::json latency_summary(const engine::Recorder& rec);

}  // namespace sim::metrics
