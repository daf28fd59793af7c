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

// Means of (time, value) samples over consecutive intervals of `interval_s` ([k x interval, (k+1) x
// interval), k = 0 .. ceil(end / interval) - 1); an interval without samples gets null.
nlohmann::json interval_means(const std::vector<std::pair<float, float>>& samples, double interval_s,
                              double end_s);

// Mean of the values of samples whose time is <= until_s; null when there is none.
nlohmann::json mean_until(const std::vector<std::pair<float, float>>& samples, double until_s);

}  // namespace sim::metrics
