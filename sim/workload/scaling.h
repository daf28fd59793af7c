// Append and generation scaling (DualPath §7.3, Fig. 9; traces/README.md, "Append and generation
// scaling"): "we scale each round's append length by a constant factor, and then truncate the whole
// trajectory at given MAL. The same holds for generation length." Pure.
//
// dpsim's reading: every turn's append becomes max(1, round(append x append_scale)) and its gen
// max(1, round(gen x gen_scale)) (round half away from zero); then the trajectory keeps its turns while its
// context (the running sum of append + gen) stays <= max_len, and ends before the first turn that would
// pass it. A first turn that alone passes max_len is cut to fit: gen kept when it leaves room for one
// appended token (else gen = 1), append = max_len - gen. think_s is kept.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/workload/trajectory.h"

namespace sim::workload {

// REQUIRES: append_scale > 0, gen_scale > 0, max_len >= 2.
Trajectory scale_trajectory(const Trajectory& t, double append_scale, double gen_scale, int64_t max_len);
std::vector<Trajectory> scale_trajectories(const std::vector<Trajectory>& ts, double append_scale,
                                           double gen_scale, int64_t max_len);

// The longest final context among `ts` (the MAL of a trajectory file). REQUIRES: !ts.empty().
int64_t max_total_tokens(const std::vector<Trajectory>& ts);

}  // namespace sim::workload
