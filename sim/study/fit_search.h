// The search of `dpsim calibrate` (sim/study/calibrate.h): the values of 1 to 3 parameters, each in a box
// [lower, upper], that minimise the sum of squared residuals of m measurements, sum_i r_i(x)^2, where each
// evaluation of r is a batch of simulations. Pure: no SimGrid, no files, no processes.
//
// The method uses no derivatives of the simulator, only its values: a derivative-free Gauss-Newton in a
// trust region (the interpolation idea of Powell's methods and of DFO-GN, Cartis and Roberts 2019). It keeps
// n + 1 evaluated points, fits the linear model of the residual vector through them, and tries the step
// that minimises the model's sum of squares within the box and the trust radius; the radius grows after a
// step that gains what the model promised and shrinks after one that does not. When the model sees no
// better point, the radius shrinks tenfold and the points are rebuilt around the best one at the new
// scale, until the radius reaches `step_tol`. A simulation costs seconds to minutes, and this needs a
// handful of evaluations per parameter where a pattern search or Nelder-Mead needs tens.
//
// Coordinates are shares of each parameter's range (0 at lower, 1 at upper), so `step_tol` and the radius
// mean the same for every parameter. Every candidate is rounded to `digits` significant digits, so that a
// candidate's values name its results (a rerun finds them) and two candidates that round alike are one.
// Deterministic: the same evaluations give the same sequence of candidates.
#pragma once

#include <functional>
#include <optional>
#include <vector>

namespace sim::study {

// The residuals of one candidate, one per measurement (here: (simulated - measured) / measured).
using Residuals = std::vector<double>;

// Evaluates a batch of candidates (parameter values inside the box, none evaluated before) and returns
// their residuals in order, each of the same length m >= 1 and finite; nullopt stops the search there
// (the caller knows why: a failed run, or runs handed out instead of run).
using FitEvaluate =
    std::function<std::optional<std::vector<Residuals>>(const std::vector<std::vector<double>>& batch)>;

struct FitProblem {
  std::vector<double> lower, upper;  // 1 to 3 parameters; lower < upper
  std::vector<double> start;         // inside the box
};

struct FitOptions {
  int max_evaluations = 30;   // candidates evaluated at most; the first batch is n + 1 of them
  double step_tol = 1e-3;     // stop when the trust radius is below this share of each range
  double initial_step = 0.2;  // the first trust radius, as a share of each range (at most 0.5)
  int digits = 7;             // candidates are rounded to this many significant digits
};

struct FitEvaluation {
  std::vector<double> x;  // the parameters' values
  Residuals r;
  double objective = 0;  // sum of r_i^2
};

enum class FitStop {
  kStep,     // the trust radius fell below step_tol (converged)
  kExact,    // every residual is zero
  kBudget,   // the next batch would exceed max_evaluations
  kStopped,  // the evaluator stopped the search
};

struct FitResult {
  std::vector<FitEvaluation> evaluations;  // every candidate evaluated, in order, each once
  std::optional<size_t> best;              // the lowest objective (ties: the earliest); none if nothing ran
  FitStop stop = FitStop::kStopped;
  int iterations = 0;
  // Near the best candidate: the sensitivities d r_i / d x_j per unit of x_j (m rows of n), the slopes of
  // the least-squares plane of each residual through the evaluations within a quarter of each range of it
  // (all of them when those are too few); empty when they do not determine it.
  std::vector<std::vector<double>> jacobian;
  // Per residual, the rms distance from their own least-squares plane of the evaluations within 0.05 of
  // each range of the best: the simulator's scatter where the fit was made (its noise, and its curvature at
  // that scale). Empty when fewer than n + 2 evaluations are that close.
  std::vector<double> scatter;
  // Per parameter, the standard deviation of a least-squares fit's value that such scatter implies through
  // the sensitivities: how well the measurements determine it. Empty when either is unknown.
  std::vector<double> spread;
};

// REQUIRES: 1 <= n <= 3 parameters, lower < upper, start inside, max_evaluations >= n + 1,
// 0 < step_tol <= initial_step <= 0.5, 1 <= digits <= 15.
FitResult fit_least_squares(const FitProblem& problem, const FitOptions& options,
                            const FitEvaluate& evaluate);

// x rounded to `digits` significant digits (0 stays 0).
double round_significant(double x, int digits);

}  // namespace sim::study
