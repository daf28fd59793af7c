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

// What summary.de_hbm is computed from, besides the recorder's byte-seconds.
struct DeHbmInputs {
  double kv_bytes_per_de = 0;          // a DE GPU's HBM for KV
  double peak_before_join = 0;         // HbmPool::peak_before_join (summed over DEs)
  double peak_before_join_one_de = 0;  // HbmPool::peak_before_join_one_de
  double duration_s = 0;               // summary.jct_s
};

// summary.de_hbm: the DE HBM held for KV by the completed turns, before they joined their decode batch
// (promised or allocated: while reading, prefilling, copying in; with cluster.de_buffer = hbm, the DE
// buffer itself) and while decoding: {kv_bytes_per_de, before_join_byte_s, decoding_byte_s,
// before_join_mean_bytes = before_join_byte_s / duration_s (summed over DE GPUs; 0 when duration_s is 0),
// before_join_peak_bytes (summed over DE GPUs), before_join_peak_bytes_one_de,
// before_join_peak_fraction_one_de = that / kv_bytes_per_de (0 when kv_bytes_per_de is 0)}. Peaks count every
// turn, completed or not.
nlohmann::json de_hbm_summary(const engine::Recorder& rec, const DeHbmInputs& in);

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

// summary.units.<role>: the role's deployment units (config/units.h). `gpus`: per GPU of the role, its unit
// and its busy seconds over a run of `duration_s`. {count, gpus_each (of the units at the start: the
// resolved unit size), utilization: {mean, min, max, spread = max - min} over the units' mean GPU
// utilisation, per_unit: [that mean per unit]}. A unit's GPUs on nodes that never served the role (engines
// built for a role change) count in it. REQUIRES: every unit index in [0, count).
struct UnitGpu {
  int unit = 0;
  double busy_s = 0;
};
nlohmann::json units_summary(int gpus_each, const std::vector<UnitGpu>& gpus, double duration_s);

// summary.time_split.<role>: where the role's GPU time went over a run of `duration_s` on `gpus` GPUs, in
// GPU-seconds and as shares of gpus x duration_s: compute, exchange, fixed, cpu, imbalance, stall
// (engine/recorder.h: TimeSplitSum) and idle (no pass or step), which add up to it. With `waits` (prefill):
// imbalance_by_cause {attention, dense, chunk}, the imbalance split by what the slowest GPU of each pass held
// more of (cost::pass_wait_causes), in GPU-seconds and as shares of the imbalance.
nlohmann::json time_split_summary(const engine::TimeSplitSum& t, double gpus, double duration_s,
                                  bool waits = false);

// summary.prefill_passes: the DP-attention groups' forward passes (engine/recorder.h: PassStats): their
// count, mean GPUs per pass and the share of them with new tokens to compute, the mean over passes of the
// slowest GPU's own part of a layer over the GPUs' mean, the shares of passes with a cut request (a chunk)
// and whose slowest GPU's batch ends in one, per GPU batch with work its mean new tokens, quota measure and
// attention (all layers) and the shares closed by the quota, the largest pass and the HBM cap, the passes'
// mean wall time. Null when no pass ran.
nlohmann::json prefill_passes_summary(const engine::PassStats& s);

}  // namespace sim::metrics
