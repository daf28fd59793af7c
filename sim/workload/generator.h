// Synthetic agent trajectories shaped like the paper's evaluation datasets (DualPath §7.2, Table 2).
// The 500-trajectory production traces are not public; only five averages per dataset are. How the five
// columns are read, why they cannot all be per-turn averages, and how the generator reproduces them:
// traces/README.md ("The generator").
//
// Default reading (the literal one; all five columns and MaxLen hold under it): every column is a
// per-trajectory quantity averaged over the trajectories, each trajectory weighing the same. For
// trajectory j with n_j turns: Turns = n_j, Append = mean append per turn of j, Gen = mean gen per turn
// of j, Total = sum of all its append + gen tokens, Context = mean over its turns of the prompt length
// (earlier context + this turn's append). Turn-weighted averages (what a simulator's turns see on
// average) are reported alongside: they are lower for Append and Gen. Weighting::kPerTurn (below) is the
// alternative reading.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/trajectory.h"

namespace sim::workload {

// One row of DualPath Table 2 (all in tokens, except turns). max_len = the dataset's MaxLen.
struct DatasetTargets {
  std::string name;  // "32k" | "48k" | "64k"
  int32_t max_len;   // every trajectory's total tokens stay <= max_len
  double turns;
  double append;
  double gen;
  double total;
  double context;
};

// The paper's Table 2, in the order 32k, 48k, 64k.
const std::vector<DatasetTargets>& dataset_targets();
// nullptr when `name` is not a Table 2 dataset.
const DatasetTargets* find_dataset(const std::string& name);
// "32k, 48k, 64k", for error messages.
std::string dataset_names();

// The five Table 2 columns of a set of trajectories (per-trajectory averages, see above), plus the
// turn-weighted per-turn averages and extremes. Empty input gives all zeros.
struct TraceAverages {
  int trajectories = 0;
  double turns = 0;
  double append = 0;
  double gen = 0;
  double total = 0;
  double context = 0;
  // Turn-weighted: every turn of every trajectory counts once (a trajectory's Turns and Total count
  // once per turn of it).
  int64_t turn_count = 0;  // turns in the set
  double turn_turns = 0;   // sum n_j^2 / sum n_j
  double turn_append = 0;  // = miss tokens per turn
  double turn_gen = 0;
  double turn_total = 0;    // sum n_j * total_j / sum n_j
  double turn_hit = 0;      // earlier context per turn = hit tokens a turn loads from storage
  double turn_context = 0;  // turn_hit + turn_append
  int64_t max_total = 0;    // largest trajectory total
};

// The per-trajectory values behind the Table 2 columns for one trajectory.
struct TrajectoryColumns {
  int turns = 0;
  double append = 0;   // mean append per turn
  double gen = 0;      // mean gen per turn
  int64_t total = 0;   // sum of append + gen
  double context = 0;  // mean prompt length (earlier context + append) per turn
};
TrajectoryColumns trajectory_columns(const Trajectory& t);
TraceAverages compute_averages(const std::vector<Trajectory>& ts);

// The generator's shape. The spreads are fixed documented choices (the paper gives no distribution);
// the five scale parameters are fitted per call so that the generated set matches Table 2.
struct GeneratorShape {
  double median_turns = 0;     // median of the natural (untruncated) number of turns
  double append_mean = 0;      // mean append of turns 2.. for a trajectory of verbosity 1
  double gen_mean = 0;         // mean gen per turn for a trajectory of verbosity 1
  double first_mean = 0;       // mean first-turn append (system prompt + task + repository overview)
  double sigma_verbosity = 0;  // lognormal spread of the per-trajectory verbosity factor
};

struct GeneratedDataset {
  std::vector<Trajectory> trajectories;
  GeneratorShape shape;      // the fitted parameters
  TraceAverages achieved;    // compute_averages(trajectories)
  double max_rel_error = 0;  // largest |achieved/target - 1| over the five fitted columns
};

// Which averages the generator makes equal to Table 2. kPerTrajectory (the default, see above) keeps
// Turns and Total as per-trajectory means; kPerTurn is the alternative reading in which every column
// is an average over turns (requests): Append/Gen/Context are then the per-request load, and the real
// mean turns per trajectory come out far below Table 2's Turns. traces/README.md compares the two.
enum class Weighting { kPerTrajectory, kPerTurn };

// Generates `trajectories` trajectories for Table 2 dataset `dataset` with seed `seed`. Deterministic:
// the same arguments give identical output (own sampling code on std::mt19937_64; see README for the
// libm caveat). Ids are "t0", "t1", ... The fit uses the first min(trajectories, 4000) trajectories:
// up to 4000 the five averages match within 1%, beyond that within sampling noise (a few %).
// REQUIRES: find_dataset(dataset) != nullptr, trajectories >= 1.
GeneratedDataset generate_dataset_fitted(const std::string& dataset, int trajectories, uint64_t seed,
                                         Weighting weighting = Weighting::kPerTrajectory);
std::vector<Trajectory> generate_dataset(const std::string& dataset, int trajectories, uint64_t seed);

// Samples with a given shape (no fitting); used by the fit and by tests.
std::vector<Trajectory> generate_with_shape(const DatasetTargets& target, const GeneratorShape& shape,
                                            int trajectories, uint64_t seed);

}  // namespace sim::workload
