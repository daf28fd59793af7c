#include "sim/workload/arrivals.h"

#include <cmath>
#include <random>

#include "sim/core/check.h"

namespace sim::workload {

namespace {

// Exponential gaps of mean 1 / rate (see arrivals.h for the transform).
class ExponentialGaps {
 public:
  ExponentialGaps(double rate_per_s, uint64_t seed) : rate_(rate_per_s), engine_(seed) {}
  double next() {
    double u = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
    return -std::log1p(-u) / rate_;
  }

 private:
  double rate_;
  std::mt19937_64 engine_;
};

void check_rate(double rate_per_s) {
  SIM_CHECK(std::isfinite(rate_per_s) && rate_per_s > 0, "rate_per_s must be finite and > 0, got {}",
            rate_per_s);
}

}  // namespace

std::vector<double> poisson_arrivals(double rate_per_s, int n, uint64_t seed) {
  check_rate(rate_per_s);
  SIM_CHECK(n >= 0, "n must be >= 0, got {}", n);
  ExponentialGaps gaps(rate_per_s, seed);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n));
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += gaps.next();
    out.push_back(t);
  }
  return out;
}

std::vector<double> poisson_arrivals(double rate_per_s, int n, uint64_t seed, double change_at_s,
                                     double rate_after_per_s) {
  check_rate(rate_per_s);
  check_rate(rate_after_per_s);
  SIM_CHECK(n >= 0, "n must be >= 0, got {}", n);
  ExponentialGaps gaps(rate_per_s, seed);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n));
  // The same gaps as at one rate up to the change; a gap that crosses it keeps its part before and, the
  // process being memoryless, has the rest rescaled to the new rate, as every later gap.
  const double scale = rate_per_s / rate_after_per_s;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    const double g = gaps.next();
    if (t >= change_at_s) {
      t += g * scale;
    } else if (t + g > change_at_s) {
      t = change_at_s + (t + g - change_at_s) * scale;
    } else {
      t += g;
    }
    out.push_back(t);
  }
  return out;
}

std::vector<double> poisson_arrivals_until(double rate_per_s, double t_end_s, uint64_t seed) {
  check_rate(rate_per_s);
  SIM_CHECK(std::isfinite(t_end_s), "t_end_s must be finite, got {}", t_end_s);
  SIM_CHECK(rate_per_s * t_end_s <= 1e9, "rate_per_s * t_end_s must be <= 1e9, got {}", rate_per_s * t_end_s);
  ExponentialGaps gaps(rate_per_s, seed);
  std::vector<double> out;
  if (t_end_s > 0) out.reserve(static_cast<size_t>(rate_per_s * t_end_s * 1.1) + 16);
  for (double t = gaps.next(); t < t_end_s; t += gaps.next()) out.push_back(t);
  return out;
}

}  // namespace sim::workload
