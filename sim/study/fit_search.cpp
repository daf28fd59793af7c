#include "sim/study/fit_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "sim/core/check.h"
#include "sim/study/linear_algebra.h"

namespace sim::study {

namespace {

using Vec = Vector;
using Mat = Matrix;

constexpr double kMinPoise = 0.1;  // below: the model's points are too close to one line or plane
constexpr double kStale = 10;      // a model point farther than this many radii is rebuilt
constexpr double kGoodRatio = 0.7, kBadRatio = 0.1;
constexpr double kNear = 0.25;   // the evaluations the sensitivities are fitted on (share of each range)
constexpr double kClose = 0.05;  // the evaluations the scatter is measured on

double sum_squares(const Vec& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return s;
}

double inf_distance(const Vec& a, const Vec& b) {
  double d = 0;
  for (size_t j = 0; j < a.size(); ++j) d = std::max(d, std::fabs(a[j] - b[j]));
  return d;
}

// What is left of the unit vector d after projecting out the orthonormal rows of q (Gram-Schmidt).
Vec orthogonal_part(const Vec& d, const Mat& q) {
  Vec v = unit_vector(d);
  for (const auto& e : q) {
    double dot = 0;
    for (size_t j = 0; j < v.size(); ++j) dot += v[j] * e[j];
    for (size_t j = 0; j < v.size(); ++j) v[j] -= dot * e[j];
  }
  return v;
}

class FitSearch {
 public:
  FitSearch(const FitProblem& p, const FitOptions& o, const FitEvaluate& e)
      : p_(p), o_(o), evaluate_(e), n_(p.lower.size()) {}

  FitResult run() {
    search();
    describe_best();
    return res_;
  }

 private:
  // The sensitivities, the scatter and the spread near the best (FitResult).
  void describe_best() {
    if (!res_.best) return;
    const Vec ub = u_of(res_.evaluations[*res_.best].x);
    const auto plane = [&](double within) {
      Mat z, y;
      for (const auto& e : res_.evaluations) {
        Vec d = u_of(e.x);
        if (inf_distance(d, ub) > within) continue;
        for (size_t j = 0; j < n_; ++j) d[j] -= ub[j];
        z.push_back(d);
        y.push_back(e.r);
      }
      return fit_plane(z, y);
    };
    std::optional<PlaneFit> wide = plane(kNear);
    if (!wide) wide = plane(1);
    if (!wide) return;
    res_.jacobian = wide->slope;
    for (auto& row : res_.jacobian)
      for (size_t j = 0; j < n_; ++j) row[j] /= p_.upper[j] - p_.lower[j];
    const std::optional<PlaneFit> close = plane(kClose);
    if (!close || close->rms.empty()) return;
    res_.scatter = close->rms;
    if (std::optional<Vec> spread = least_squares_spread(res_.jacobian, res_.scatter)) res_.spread = *spread;
  }

  void search() {
    double radius = std::min(o_.initial_step, 0.5);
    const Vec x0 = snap(u_of(p_.start));
    std::vector<Vec> first = {x0};
    Mat spanned;
    for (const Vec& c : coordinate_points(x0, radius, spanned)) first.push_back(c);
    if (!evaluate(first)) return;
    std::vector<size_t> y;
    for (const Vec& x : first)
      if (std::find(y.begin(), y.end(), index_.at(x)) == y.end()) y.push_back(index_.at(x));
    const int max_iterations = 20 * o_.max_evaluations + 100;  // each iteration evaluates or shrinks
    while (res_.iterations++ < max_iterations) {
      const size_t b = best_of(y);
      const FitEvaluation eb = res_.evaluations[b];  // a copy: evaluate() appends to the evaluations
      if (eb.objective == 0) return stop(FitStop::kExact);
      std::optional<Mat> jac = model(y, b, radius);
      if (!jac) {
        if (!rebuild(b, radius, &y)) return;
        if (!model(y, b, radius)) return stop(FitStop::kStep);  // the radius is below what the digits resolve
        continue;
      }
      const Vec ub = u_of(eb.x);
      Vec lo(n_), hi(n_), target(n_);
      for (size_t j = 0; j < n_; ++j) {
        lo[j] = std::max(-radius, -ub[j]);
        hi[j] = std::min(radius, 1 - ub[j]);
      }
      const Vec s = box_least_squares(eb.r, *jac, lo, hi);
      for (size_t j = 0; j < n_; ++j) target[j] = ub[j] + s[j];
      const Vec xt = snap(target);
      Vec st(n_);
      const Vec ut = u_of(xt);
      for (size_t j = 0; j < n_; ++j) st[j] = ut[j] - ub[j];
      const double predicted = eb.objective - model_value(eb.r, *jac, st);
      const double step = inf_distance(ut, ub);
      if (step < 0.5 * o_.step_tol || predicted <= 1e-12 * eb.objective) {
        // The model sees no better point within the radius: look closer, or stop.
        if (radius <= o_.step_tol * (1 + 1e-9)) return stop(FitStop::kStep);
        radius = std::max(radius / 10, o_.step_tol);
        if (!rebuild(b, radius, &y)) return;
        continue;
      }
      if (!evaluate({xt})) return;
      const size_t t = index_.at(xt);
      const double ratio = (eb.objective - res_.evaluations[t].objective) / predicted;
      if (ratio >= kGoodRatio && step >= 0.5 * radius) radius = std::min(2 * radius, 0.5);
      if (ratio < kBadRatio) radius = 0.5 * step;
      replace(t, &y);
      if (radius < o_.step_tol) return stop(FitStop::kStep);
    }
    return stop(FitStop::kBudget);
  }

  void stop(FitStop why) { res_.stop = why; }

  Vec u_of(const Vec& x) const {
    Vec u(n_);
    for (size_t j = 0; j < n_; ++j) u[j] = (x[j] - p_.lower[j]) / (p_.upper[j] - p_.lower[j]);
    return u;
  }
  // The candidate at u: its values rounded to the digits, inside the box.
  Vec snap(const Vec& u) const {
    Vec x(n_);
    for (size_t j = 0; j < n_; ++j) {
      const double v = p_.lower[j] + std::clamp(u[j], 0.0, 1.0) * (p_.upper[j] - p_.lower[j]);
      x[j] = std::clamp(round_significant(v, o_.digits), p_.lower[j], p_.upper[j]);
    }
    return x;
  }

  size_t best_of(const std::vector<size_t>& y) const {
    size_t b = y.front();
    for (size_t i : y)
      if (res_.evaluations[i].objective < res_.evaluations[b].objective ||
          (res_.evaluations[i].objective == res_.evaluations[b].objective && i < b))
        b = i;
    return b;
  }

  Mat directions(const std::vector<size_t>& y, size_t b) const {
    Mat d;
    const Vec ub = u_of(res_.evaluations[b].x);
    for (size_t i : y) {
      if (i == b) continue;
      Vec v = u_of(res_.evaluations[i].x);
      for (size_t j = 0; j < n_; ++j) v[j] -= ub[j];
      d.push_back(v);
    }
    return d;
  }

  // The linear model of r through the points y, centred on b, per unit of u: J (m rows of n); nullopt when
  // the points do not determine it well (too few, nearly dependent, or far beyond the radius).
  std::optional<Mat> model(const std::vector<size_t>& y, size_t b, double radius) {
    if (y.size() != n_ + 1) return std::nullopt;
    const Mat d = directions(y, b);
    for (const auto& v : d)
      if (inf_distance(v, Vec(n_, 0.0)) > kStale * radius) return std::nullopt;
    if (poise(d) < kMinPoise) return std::nullopt;  // also a point that rounds onto b
    const Vec& rb = res_.evaluations[b].r;
    Mat dr;
    for (size_t i : y) {
      if (i == b) continue;
      Vec v = res_.evaluations[i].r;
      for (size_t k = 0; k < v.size(); ++k) v[k] -= rb[k];
      dr.push_back(v);
    }
    const std::optional<Mat> jt = solve(d, dr);  // D J^T = dR
    if (!jt) return std::nullopt;
    Mat jac(rb.size(), Vec(n_));
    for (size_t i = 0; i < rb.size(); ++i)
      for (size_t j = 0; j < n_; ++j) jac[i][j] = (*jt)[j][i];
    return jac;
  }

  // Points at `radius` from x along the coordinates least covered by the directions q (orthonormal rows),
  // toward the inside of the box, until q spans every coordinate.
  std::vector<Vec> coordinate_points(const Vec& x, double radius, Mat& q) const {
    std::vector<Vec> out;
    const Vec u = u_of(x);
    while (q.size() < n_) {
      size_t k = 0;
      double best = -1;
      Vec part;
      for (size_t j = 0; j < n_; ++j) {
        Vec e(n_, 0.0);
        e[j] = 1;
        const Vec v = orthogonal_part(e, q);
        if (std::sqrt(sum_squares(v)) > best + 1e-12) {
          best = std::sqrt(sum_squares(v));
          k = j;
          part = v;
        }
      }
      q.push_back(unit_vector(part));
      Vec v = u;
      v[k] += u[k] + radius <= 1 ? radius : -radius;
      out.push_back(snap(v));
    }
    return out;
  }

  // Rebuilds the model's points around b at the radius: evaluated points near that distance when they
  // are well spread, coordinate points for the rest. False when the search stopped.
  bool rebuild(size_t b, double radius, std::vector<size_t>* y) {
    const Vec ub = u_of(res_.evaluations[b].x);
    std::vector<std::pair<double, size_t>> near;
    for (size_t i = 0; i < res_.evaluations.size(); ++i) {
      const double d = inf_distance(u_of(res_.evaluations[i].x), ub);
      if (i != b && d >= radius / 4 && d <= 2 * radius) near.emplace_back(std::fabs(std::log(d / radius)), i);
    }
    std::sort(near.begin(), near.end());
    std::vector<size_t> keep = {b};
    Mat q;
    for (const auto& [score, i] : near) {
      if (q.size() == n_) break;
      Vec d = u_of(res_.evaluations[i].x);
      for (size_t j = 0; j < n_; ++j) d[j] -= ub[j];
      const Vec v = orthogonal_part(d, q);
      if (std::sqrt(sum_squares(v)) < 0.5) continue;
      q.push_back(unit_vector(v));
      keep.push_back(i);
    }
    const std::vector<Vec> fresh = coordinate_points(res_.evaluations[b].x, radius, q);
    if (!evaluate(fresh)) return false;
    for (const Vec& x : fresh)
      if (std::find(keep.begin(), keep.end(), index_.at(x)) == keep.end()) keep.push_back(index_.at(x));
    *y = keep;
    return true;
  }

  // Adds t to the model's points and drops one other than the best: among the drops that leave the points
  // well spread (at least half the best poise), the point farthest from the best.
  void replace(size_t t, std::vector<size_t>* y) const {
    if (std::find(y->begin(), y->end(), t) != y->end()) return;
    std::vector<size_t> all = *y;
    all.push_back(t);
    const size_t b = best_of(all);
    const Vec ub = u_of(res_.evaluations[b].x);
    std::vector<double> spread(all.size(), -1);
    double top = 0;
    for (size_t k = 0; k < all.size(); ++k) {
      if (all[k] == b) continue;
      std::vector<size_t> rest = all;
      rest.erase(rest.begin() + static_cast<long>(k));
      spread[k] = poise(directions(rest, b));
      top = std::max(top, spread[k]);
    }
    size_t drop = all.size();
    double far = -1;
    for (size_t k = 0; k < all.size(); ++k) {
      if (spread[k] < 0 || spread[k] < 0.5 * top) continue;
      const double d = inf_distance(u_of(res_.evaluations[all[k]].x), ub);
      if (d > far) {
        far = d;
        drop = k;
      }
    }
    all.erase(all.begin() + static_cast<long>(drop));
    *y = all;
  }

  // Evaluates the candidates not evaluated yet, as one batch. False when the search stops (the budget, or
  // the evaluator); its reason is then set.
  bool evaluate(const std::vector<Vec>& xs) {
    std::vector<Vec> fresh;
    for (const Vec& x : xs)
      if (!index_.count(x) && std::find(fresh.begin(), fresh.end(), x) == fresh.end()) fresh.push_back(x);
    if (fresh.empty()) return true;
    if (res_.evaluations.size() + fresh.size() > static_cast<size_t>(o_.max_evaluations)) {
      stop(FitStop::kBudget);
      return false;
    }
    const std::optional<std::vector<Residuals>> rs = evaluate_(fresh);
    if (!rs) {
      stop(FitStop::kStopped);
      return false;
    }
    SIM_CHECK(rs->size() == fresh.size(), "{} residual vectors for {} candidates", rs->size(), fresh.size());
    for (size_t i = 0; i < fresh.size(); ++i) {
      const Residuals& r = (*rs)[i];
      SIM_CHECK(!r.empty() && (res_.evaluations.empty() || r.size() == res_.evaluations[0].r.size()),
                "residual vector of size {}", r.size());
      for (double v : r) SIM_CHECK(std::isfinite(v), "residual {}", v);
      index_[fresh[i]] = res_.evaluations.size();
      res_.evaluations.push_back({fresh[i], r, sum_squares(r)});
      if (!res_.best || res_.evaluations.back().objective < res_.evaluations[*res_.best].objective)
        res_.best = res_.evaluations.size() - 1;
    }
    return true;
  }

  const FitProblem& p_;
  const FitOptions& o_;
  const FitEvaluate& evaluate_;
  const size_t n_;
  FitResult res_;
  std::map<Vec, size_t> index_;  // evaluation by candidate
};

}  // namespace

double round_significant(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return x;
  return std::strtod(fmt::format("{:.{}g}", x, digits).c_str(), nullptr);
}

FitResult fit_least_squares(const FitProblem& problem, const FitOptions& options,
                            const FitEvaluate& evaluate) {
  const size_t n = problem.lower.size();
  SIM_CHECK(n >= 1 && n <= 3 && problem.upper.size() == n && problem.start.size() == n, "{} parameters", n);
  for (size_t j = 0; j < n; ++j)
    SIM_CHECK(problem.lower[j] < problem.upper[j] && problem.start[j] >= problem.lower[j] &&
                  problem.start[j] <= problem.upper[j],
              "parameter {}: start {} in [{}, {}]", j, problem.start[j], problem.lower[j], problem.upper[j]);
  SIM_CHECK(options.max_evaluations >= static_cast<int>(n) + 1 && options.step_tol > 0 &&
                options.step_tol <= options.initial_step && options.digits >= 1 && options.digits <= 15,
            "options: max_evaluations {}, step_tol {}, initial_step {}, digits {}", options.max_evaluations,
            options.step_tol, options.initial_step, options.digits);
  return FitSearch(problem, options, evaluate).run();
}

}  // namespace sim::study
