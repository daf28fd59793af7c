// Poisson arrivals: the online mode's agent (or request) arrival times (DualPath §8.2: agents arrive by
// a Poisson process of rate APS, agents per second).
//
// Inter-arrival gaps are independent exponentials of mean 1 / rate; the first arrival comes one gap
// after t = 0. Sampling is platform-independent: std::mt19937_64 (its output is fixed by the C++
// standard) and our own transform, never std::exponential_distribution (implementation-defined):
//   u   = (engine() >> 11) * 2^-53        (the top 53 bits: uniform in [0, 1))
//   gap = -log(1 - u) / rate_per_s        (seconds, computed as -log1p(-u) / rate_per_s; 1 - u is in
//                                          (0, 1], so the gap is finite and >= 0)
// One draw per arrival, in order, so for one seed the arrivals before any time are the same whichever
// function produced them, and poisson_arrivals_until(r, t, s) is a prefix of poisson_arrivals(r, n, s)
// for n large enough. The only platform dependence left is the last bit of the C library's log().
#pragma once

#include <cstdint>
#include <vector>

namespace sim::workload {

// The first `n` arrival times, in seconds, non-decreasing.
// REQUIRES: rate_per_s finite and > 0; n >= 0.
std::vector<double> poisson_arrivals(double rate_per_s, int n, uint64_t seed);
// As above, but from change_at_s on at rate_after_per_s (workload.aps_change): before it the same times.
std::vector<double> poisson_arrivals(double rate_per_s, int n, uint64_t seed, double change_at_s,
                                     double rate_after_per_s);

// Every arrival time t < t_end_s, in seconds, non-decreasing (empty when t_end_s <= 0).
// REQUIRES: rate_per_s finite and > 0; t_end_s finite; rate_per_s * t_end_s <= 1e9 (memory).
std::vector<double> poisson_arrivals_until(double rate_per_s, double t_end_s, uint64_t seed);

}  // namespace sim::workload
