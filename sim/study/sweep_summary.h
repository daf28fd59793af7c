// The pure half of `dpsim sweep` (no SimGrid, no processes): the (P, D) grid and `--set-list` parsing,
// point names, and the summary built from the points' results JSONs, including the measured
// bottleneck-free range (README.md, "Sweeps, checks and comparisons").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/status.h"

namespace sim::study {

struct GridPoint {
  int p = 1;  // prefill nodes
  int d = 1;  // decode nodes
};

// "--pd 1:7,2:4": explicit (P, D) pairs.
StatusOr<std::vector<GridPoint>> parse_pd_list(const std::string& text);
// "--ratios 1/9,1/7,2,7/2 --nodes N": each ratio a/b (reduced) becomes k·a : k·b with the largest k such
// that k(a+b) <= N, so every point has exactly the ratio asked for; when a+b > N the pair with P+D = N
// nearest to the ratio (P, D >= 1) is used instead.
StatusOr<std::vector<GridPoint>> parse_ratios(const std::string& text, int nodes);
// "--p 1..8 --d 4" (or "--p 1,2,4"): P over a range or list at fixed D.
StatusOr<std::vector<GridPoint>> parse_p_range(const std::string& text, int d);

// "--set-list key=v1,v2,...": one more sweep dimension.
struct SetList {
  std::string key;
  std::vector<std::string> values;
};
StatusOr<SetList> parse_set_list(const std::string& text);

struct SweepPoint {
  std::string name;  // "p1-d9-split": file stem under points/
  GridPoint pd;
  std::vector<std::pair<std::string, std::string>> sets;  // key, value (the --set-list choices)
};
// The grid crossed with every set list, grid-major, in the order given. Names are unique.
std::vector<SweepPoint> expand_grid(const std::vector<GridPoint>& grid, const std::vector<SetList>& lists);

// The manifest of a sweep (DIR/sweep.json), written before any point runs so that `--merge DIR` can
// rebuild the summary: {"kind": "sweep-manifest", "scenario", "threshold", "grid", "points": [...],
// "analytic_range"}. read_manifest is its inverse.
nlohmann::json manifest_json(const std::string& scenario, double threshold,
                             const std::vector<GridPoint>& grid, const std::vector<SweepPoint>& points,
                             const nlohmann::json& analytic_range);
StatusOr<std::vector<SweepPoint>> points_of_manifest(const nlohmann::json& manifest, const std::string& file);

// Classification of one run (a results JSON of `dpsim run`), threshold in (0, 1]:
//  busy part   the time-series intervals whose SNIC-in traffic, summed over all nodes, is at least half of
//              its largest interval (ramp-up and the draining tail are left out); with no series, the
//              whole run's mean utilisations are used instead.
//  class util  per resource class "role.resource.direction" (e.g. "prefill.cnic.write"): the mean over
//              the class's links of their mean utilisation over the busy part; prefill GPU compute is its
//              whole-run busy fraction.
//  saturated   a CNIC direction, DRAM, PCIe or storage class (or the prefill GPUs) whose utilisation is
//              >= threshold AND more than kTieMargin above the SNICs': it runs fuller than the SNICs, so
//              it, not storage I/O, limits the run. At the paper's bounds the binding resource runs
//              exactly as full as the SNICs (the inequalities of §4.2 are inclusive), hence the margin.
//  bottleneck_free  SNIC-in utilisation (all nodes) >= threshold and no CNIC direction, DRAM (or other
//              class) saturated.
//  first_saturated  (points that are not bottleneck-free) among the saturated classes the one whose
//              series first rises above the threshold (ties: the higher utilisation); when none is
//              saturated (the SNICs simply run below the threshold), the class with the highest utilisation.
inline constexpr double kTieMargin = 0.02;
inline constexpr double kBusyFraction = 0.5;

// One entry of summary.json's "points" (see README.md); `result` null = the point has no result yet.
nlohmann::json point_summary(const SweepPoint& point, const nlohmann::json* result, double threshold,
                             const std::string& result_path);

// summary.json: {"kind": "sweep", "scenario", "threshold", "grid", "analytic_range", "measured_range",
// "measured_ranges" (one per combination of set-list values), "points"}. measured_range = min/max P/D over
// the bottleneck-free points (nulls when there are none).
nlohmann::json sweep_summary(const nlohmann::json& manifest,
                             const std::vector<nlohmann::json>& point_summaries);

// summary.csv: one row per point.
std::string summary_csv(const nlohmann::json& summary);

}  // namespace sim::study
