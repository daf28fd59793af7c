// Pure helpers that turn recorded samples into the results JSON's views.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
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

// What summary.cost is computed from; every count is over the run's completed turns unless said otherwise.
struct CostInputs {
  std::optional<double> per_node_hour;  // the hardware's cost.per_node_hour; unset = unknown
  int nodes = 0;                        // prefill + decode nodes
  double duration_s = 0;                // the run's duration: summary.jct_s, as for the throughputs
  double tokens = 0;                    // prompt (hit + miss) + generated tokens
  double gen_tokens = 0;                // generated tokens
  double turns_completed = 0;
  double turns_total = 0;  // of the whole workload
  double agents = 0;       // of the whole workload
};

// summary.cost: null when the price is unknown, else {per_node_hour, nodes, cluster_per_hour = per_node_hour
// x nodes, run_cost = cluster_per_hour x duration_s / 3600, per_million_tokens = run_cost / (tokens / 1e6),
// per_million_gen_tokens = run_cost / (gen_tokens / 1e6), per_agent_task = run_cost / (turns_completed /
// (turns_total / agents))}: an agent task is one whole trajectory, so a run stopped part-way counts the
// fraction of the mean trajectory it completed. A ratio whose denominator is 0 is null.
nlohmann::json cost_summary(const CostInputs& in);

}  // namespace sim::metrics
