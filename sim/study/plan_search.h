// The pure half of `dpsim plan` (no SimGrid, no processes): the space of clusters it searches, the search
// itself and its answer (README.md, "Capacity planning").
//
// The search is a function of the outcomes known so far: plan_step() replays it from the start over the
// known outcomes and returns the runs it needs next, or, when it needs none, the answer. So a plan resumes
// from the runs already in its directory, runs each round of independent runs in parallel, and can hand
// a round to a cluster's job array (--emit-jobs) and go on once their results are there.
//
// Space: for each choice (a combination of --set-list values), clusters of n nodes, min_nodes <= n <=
// max_nodes, split as P prefill + D decode nodes. The splits of n searched are those whose P/D lies in the
// choice's analytic bottleneck-free range (DualPath §4.2, `dpsim bottleneck`; outside it a CNIC or DRAM
// saturates before the SNICs), or the one nearest to it when none does, thinned to at most max_splits
// spread evenly over the range; `prune = false` takes every split. A size is feasible when one of its
// splits meets the goal.
//
// Goals:
//   kSlo          (online) the smallest size that meets the SLO at the scenario's load. Feasibility is
//                 taken as monotone in the size: sizes min, 2 min, 4 min, ... until one is feasible, then
//                 bisection between it and the last infeasible one.
//   kJctTarget    (offline) the smallest size whose JCT is within the target; searched the same way.
//   kJctTimesSize (offline) the size and split that minimise JCT x size (GPU-seconds, or money with the cost
//                 objective). Taken as unimodal in the size: ternary search, then every size of the last
//                 bracket.
// Size: GPUs (n x GPUs per node) or, with the cost objective, money per hour (n x cost.per_node_hour).
// The answer is the choice whose best point has the smallest size (kJctTimesSize: the smallest JCT x size);
// ties go to the smaller metric (the SLO margin, or the JCT).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/study/sweep_summary.h"

namespace sim::study {

enum class PlanGoal { kSlo, kJctTarget, kJctTimesSize };
enum class PlanObjective { kGpus, kCost };

// One combination of --set-list values and what the search needs of its hardware.
struct PlanChoice {
  std::vector<std::pair<std::string, std::string>> sets;
  std::string suffix;                         // "-<value>..." for point names ("" without --set-list)
  int gpus_per_node = 8;                      // a prefill node's (and a decode node's unless per_role)
  std::optional<double> price_per_node_hour;  // the same
  // A hardware file per role (hardware_decode): a decode node's GPUs and price are these.
  bool per_role = false;
  int decode_gpus_per_node = 8;
  std::optional<double> decode_price_per_node_hour;
  // The GPUs, and the price per hour (unset when a role's price is unknown), of P prefill and D decode nodes.
  int gpus(const GridPoint& pd) const {
    return per_role ? pd.p * gpus_per_node + pd.d * decode_gpus_per_node : (pd.p + pd.d) * gpus_per_node;
  }
  std::optional<double> price_per_hour(const GridPoint& pd) const {
    if (!per_role)
      return price_per_node_hour ? std::optional<double>((pd.p + pd.d) * *price_per_node_hour) : std::nullopt;
    if (!price_per_node_hour || !decode_price_per_node_hour) return std::nullopt;
    return pd.p * *price_per_node_hour + pd.d * *decode_price_per_node_hour;
  }
  bool has_range = false;  // the analytic range is feasible
  double pd_min = 0, pd_max = 0;
  // Deployment units (config/units.h): P and D are multiples of these node counts (1 = any count).
  int unit_p = 1, unit_d = 1;
};

struct PlanSpace {
  int min_nodes = 2;
  int max_nodes = 16;
  int max_splits = 5;
  bool prune = true;
  PlanGoal goal = PlanGoal::kSlo;
  PlanObjective objective = PlanObjective::kGpus;
  std::vector<PlanChoice> choices;
};

struct PlanPoint {
  int choice = 0;
  GridPoint pd;
  std::string name;  // "n6-p2-d4<suffix>": the file stem under points/
  int nodes() const { return pd.p + pd.d; }
};

// A failed run whose fullest resource class ran below this mean utilisation is called latency-bound in its
// reason: per-request latency, not capacity, missed the goal.
inline constexpr double kLatencyBound = 0.5;

// What one run says about its point.
struct PlanOutcome {
  bool ok = false;    // meets the goal
  double metric = 0;  // lower is better: the SLO margin, or the JCT (+inf when unknown)
  std::string why;    // when not ok: which SLO or limit failed, and the resource that ran fullest
};

// The splits of `n` nodes searched for choice `c` (P ascending): only those made of whole units (none when
// no split of n is).
std::vector<GridPoint> plan_splits(int n, const PlanChoice& c, const PlanSpace& s);
PlanPoint plan_point(int choice, const GridPoint& pd, const PlanSpace& s);

// The size of a point in the objective's unit: GPUs, or money per hour (REQUIRES a price then).
double plan_size(const PlanPoint& p, const PlanSpace& s);

// The outcome of a results JSON of `dpsim run` for a goal (jct_target_s: kJctTarget only).
//   kSlo: ok = summary.meets_slo; metric = max(judged TTFT / slo.ttft_s, judged TPOT / slo.tpot_s), +inf
//         when nothing was judged, and at least 1 when the TTFT rule stopped the run. slo.mode = relative:
//         metric = (1 - slo_attainment) / (1 - slo.attainment), the share of turns missing their own bounds
//         over the share allowed to (at least 1 when the TTFT rule stopped the run).
//   kJctTarget: ok = complete and jct_s <= target; metric = jct_s (+inf when incomplete).
//   kJctTimesSize: ok = complete; metric = jct_s (+inf when incomplete).
PlanOutcome plan_outcome(const nlohmann::json& result, PlanGoal goal, double jct_target_s);

struct PlanBest {
  int choice = 0;
  bool found = false;
  PlanPoint point;
  double size = 0;       // plan_size of the point
  double objective = 0;  // what the choices are ranked by: size, or JCT x size for kJctTimesSize
  double metric = 0;
};

struct PlanStep {
  std::vector<PlanPoint> needed;  // the runs the search needs next; empty when it is done
  // When done: each choice's best point, the recommended one (index into best; -1 when no choice has a
  // feasible point) and the neighbours that failed: the recommended choice's points one size below and
  // the other splits of its size that did not meet the goal.
  std::vector<PlanBest> best;
  int recommended = -1;
  std::vector<std::string> rejected_neighbours;
  std::vector<PlanPoint> probed;  // every point the search looked at, in the order it did
};

PlanStep plan_step(const PlanSpace& s, const std::map<std::string, PlanOutcome>& known);

// Indexes of the points no other point beats: (x, y) with both lower is better, a point is on the front
// unless another has x' <= x and y' <= y with one of them strictly lower. In x order.
std::vector<size_t> pareto_front(const std::vector<std::pair<double, double>>& xy);

}  // namespace sim::study
