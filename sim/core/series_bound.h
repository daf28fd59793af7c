// The length of the results' time series is bounded, whatever a run's length: a series has at most
// kMaxSeriesPoints points. Its interval is outputs.timeseries_interval_s, doubled as often as the run's
// length needs; the results give the interval used (summary.series_interval_s, and the series_interval_s
// of each section). A run of 2,048 x 10 s = 5.7 simulated hours keeps the scenario's interval.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace sim::core {

inline constexpr size_t kMaxSeriesPoints = 2048;

// The interval a run that ends at `end_s` reports its series at: base x 2^k for the smallest k >= 0 with
// ceil(end_s / interval) <= kMaxSeriesPoints; 0 when base is 0 (no series).
inline double series_interval(double base, double end_s) {
  if (base <= 0) return 0;
  double interval = base;
  while (std::ceil(end_s / interval - 1e-9) > static_cast<double>(kMaxSeriesPoints)) interval *= 2;
  return interval;
}

// v's consecutive groups of `factor` points merged into one each (the last group may be shorter): their
// sum, or their mean.
inline std::vector<double> merge_points(const std::vector<double>& v, size_t factor, bool mean) {
  if (factor <= 1) return v;
  std::vector<double> out;
  out.reserve(v.size() / factor + 1);
  for (size_t b = 0; b < v.size(); b += factor) {
    double sum = 0;
    size_t n = 0;
    for (size_t i = b; i < v.size() && i < b + factor; ++i, ++n) sum += v[i];
    out.push_back(mean ? sum / static_cast<double>(n) : sum);
  }
  return out;
}

// The merge factor from a series kept at `kept_s` to one at `interval_s` (a power of 2 times it).
inline size_t merge_factor(double kept_s, double interval_s) {
  return kept_s > 0 && interval_s > kept_s ? static_cast<size_t>(std::llround(interval_s / kept_s)) : 1;
}

}  // namespace sim::core
