// The results' resources, resource_classes, bottleneck and balance sections: every accounted link
// direction and GPU of the run with its load, the mean utilisation per resource class, the class that ran
// fullest, and DualPath §7.5's load-balance measures.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/engine/recorder.h"
#include "sim/metrics/link_stats.h"
#include "sim/platform/resource_class.h"

namespace sim::metrics {

// One GPU engine's busy time (a PE, or a DE with the largest batch it held).
struct GpuLoad {
  int node = 0;
  int gpu = 0;
  double busy_s = 0;
  int max_batch = -1;  // a DE's; -1 for a PE (no entry)
  double pass_s = 0;   // a PE's time in its DP group's passes
};

// One node's DRAM buffer over the run: its capacity, the byte-seconds it held, its peak.
struct BufferLoad {
  int node = 0;
  platform::NodeRole role = platform::NodeRole::kPrefill;
  double capacity_bytes = 0;
  double byte_s = 0;
  double peak_bytes = 0;
};

// clang-tidy's bugprone-exception-escape is a false positive here: clang-tidy 14 follows nlohmann::json's
// noexcept move and destructor into calls that can throw but that they never reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ResourceViews {
  nlohmann::json resources;               // resources.<class>[]: links (from LinkStats), then PEs, then DEs
  std::map<std::string, double> classes;  // "prefill.cnic.write" -> mean utilisation over its members
  nlohmann::json bottleneck;              // {resource, utilization}
};

// Over a run that ended at `end_s`. The bottleneck is the service class (a link direction, a prefill GPU's
// compute) with the highest mean utilisation. Three classes are reported but are not candidates, because
// each is full whenever there is any work, however little: a decode GPU's busy fraction (time with a
// non-empty batch), a prefill GPU's pass fraction (the time its group's lock-step passes hold it, a GPU
// without work in the pass included) and a DRAM buffer's occupancy (the bytes waiting for the stage after
// it). summary.time_split says how full the passes and steps are.
ResourceViews resource_views(const LinkStats& links, const std::vector<GpuLoad>& pes,
                             const std::vector<GpuLoad>& des, const std::vector<BufferLoad>& buffers,
                             double end_s);

// balance: DualPath §7.5's two load-balance measures, whole-run and over time.
//   snic_max_avg        max/avg traffic across the storage NICs per window, averaged over the windows
//                       with traffic; snic_max_avg_series: the same per series interval
//   attention_max_avg   max/avg attention time across the GPUs of a DP-attention group per forward pass,
//                       averaged over the passes that start in the first 5% of the run (null when every
//                       group is one GPU: cluster.prefill_dp_group_gpus = 1); _series per series interval;
//                       attention_max_avg_run: the same over every pass of the run
nlohmann::json balance_summary(const LinkStats& links, const engine::Recorder& rec,
                               const config::OutputConfig& out, double jct);

}  // namespace sim::metrics
