#include "sim/workload/arrivals.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

namespace wl = sim::workload;

namespace {

struct GapStats {
  double mean = 0, variance = 0, above_mean = 0;  // above_mean: fraction of gaps > 1 / rate
};

GapStats gap_stats(const std::vector<double>& t, double rate) {
  std::vector<double> gaps;
  double prev = 0;
  for (double x : t) gaps.push_back(x - prev), prev = x;
  GapStats s;
  for (double g : gaps) s.mean += g;
  s.mean /= static_cast<double>(gaps.size());
  for (double g : gaps) {
    s.variance += (g - s.mean) * (g - s.mean);
    s.above_mean += g > 1 / rate;
  }
  s.variance /= static_cast<double>(gaps.size() - 1);
  s.above_mean /= static_cast<double>(gaps.size());
  return s;
}

}  // namespace

TEST_CASE("Poisson arrivals: 200k gaps -> exponential with mean 1/rate and variance 1/rate^2", "[unit]") {
  const double rate = 2.5;
  std::vector<double> t = wl::poisson_arrivals(rate, 200000, 42);
  REQUIRE(t.size() == 200000);
  CHECK(t.front() > 0);
  for (size_t i = 1; i < t.size(); ++i) REQUIRE(t[i] >= t[i - 1]);
  GapStats s = gap_stats(t, rate);
  // Standard errors: 0.22% for the mean, 0.63% for the variance; the tolerances are > 4.5 of them.
  CHECK(s.mean == Approx(1 / rate).epsilon(0.01));
  CHECK(s.variance == Approx(1 / (rate * rate)).epsilon(0.03));
  CHECK(s.above_mean == Approx(std::exp(-1.0)).margin(0.005));  // P(gap > mean) = 1/e
}

TEST_CASE("Poisson arrivals: until t_end -> count near rate x t_end and the same stream as by count",
          "[unit]") {
  const double rate = 10, t_end = 20000;
  std::vector<double> until = wl::poisson_arrivals_until(rate, t_end, 7);
  // Count ~ Poisson(200,000): standard deviation 447, tolerance 2,000.
  CHECK(static_cast<double>(until.size()) == Approx(rate * t_end).margin(2000));
  CHECK(until.back() < t_end);
  std::vector<double> by_count = wl::poisson_arrivals(rate, static_cast<int>(until.size()) + 1, 7);
  for (size_t i = 0; i < until.size(); ++i) REQUIRE(until[i] == by_count[i]);
  CHECK(by_count.back() >= t_end);
  CHECK(wl::poisson_arrivals_until(rate, 0, 7).empty());
  CHECK(wl::poisson_arrivals(rate, 0, 7).empty());
}

TEST_CASE("Poisson arrivals: fixed seed -> identical sequence, another seed -> a different one", "[unit]") {
  CHECK(wl::poisson_arrivals(3, 1000, 5) == wl::poisson_arrivals(3, 1000, 5));
  CHECK(wl::poisson_arrivals(3, 1000, 5) != wl::poisson_arrivals(3, 1000, 6));
  // Doubling the rate halves every gap of the same stream.
  std::vector<double> slow = wl::poisson_arrivals(1, 100, 9), fast = wl::poisson_arrivals(2, 100, 9);
  for (size_t i = 0; i < slow.size(); ++i) CHECK(fast[i] == Approx(slow[i] / 2).epsilon(1e-12));
}

TEST_CASE("Poisson arrivals: the draw -> -log(1 - u) with u from the top 53 bits of mt19937_64", "[unit]") {
  // The C++ standard fixes mt19937_64's 10000th output for the default seed 5489.
  const uint64_t kTenThousandth = 9981545732273789042ULL;
  std::mt19937_64 check(5489);
  check.discard(9999);
  REQUIRE(check() == kTenThousandth);
  std::vector<double> t = wl::poisson_arrivals(1, 10000, 5489);
  double u = static_cast<double>(kTenThousandth >> 11) * std::ldexp(1.0, -53);
  CHECK(t[9999] - t[9998] == Approx(-std::log(1 - u)).epsilon(1e-9));
  std::mt19937_64 first(5489);
  double u0 = static_cast<double>(first() >> 11) * std::ldexp(1.0, -53);
  CHECK(wl::poisson_arrivals(4, 1, 5489)[0] == Approx(-std::log(1 - u0) / 4).epsilon(1e-15));
}

TEST_CASE("Poisson arrivals with a rate change: the same times before it, then gaps of the new rate",
          "[unit]") {
  const double before = 0.5, after = 2.0, at = 20000;  // about 10,000 arrivals before the change
  const std::vector<double> one = wl::poisson_arrivals(before, 200000, 7);
  const std::vector<double> two = wl::poisson_arrivals(before, 200000, 7, at, after);
  size_t k = 0;
  while (one[k] <= at) {
    REQUIRE(two[k] == one[k]);
    ++k;
  }
  CHECK(k > 9000);
  // After the change: counts per unit time at the new rate (190,000 arrivals over about 95,000 s), and the
  // gaps exponential at that rate. A rate that did not change would put them 4x further apart.
  const std::vector<double> tail(two.begin() + static_cast<long>(k) + 1, two.end());
  std::vector<double> shifted;
  for (double t : tail) shifted.push_back(t - two[k]);
  const GapStats s = gap_stats(shifted, after);
  CHECK(s.mean == Approx(1 / after).epsilon(0.01));
  CHECK(s.variance == Approx(1 / (after * after)).epsilon(0.03));
  // The gap that crosses the change: its part before it as drawn, the rest rescaled by before/after.
  CHECK(two[k] == Approx(at + (one[k] - at) * before / after).epsilon(1e-12));
}
