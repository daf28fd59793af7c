// Unit tests of the search of `dpsim calibrate` (sim/study/fit_search.h) on synthetic "simulators" whose
// best values are known: inside the box, at a bound, and with measurements that contradict each other.
#include "sim/study/fit_search.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

using sim::study::fit_least_squares;
using sim::study::FitEvaluate;
using sim::study::FitOptions;
using sim::study::FitProblem;
using sim::study::FitResult;
using sim::study::FitStop;
using sim::study::Residuals;
using sim::study::round_significant;

namespace {

using Vec = std::vector<double>;
using Simulator = std::function<Vec(const Vec& x)>;

// An evaluator of relative residuals (simulated - measured) / measured; counts the batches it is given.
FitEvaluate relative(const Simulator& sim, const Vec& measured, int* batches = nullptr) {
  return [sim, measured, batches](const std::vector<Vec>& xs) {
    if (batches) ++*batches;
    std::vector<Residuals> out;
    for (const Vec& x : xs) {
      const Vec s = sim(x);
      Residuals r;
      for (size_t i = 0; i < s.size(); ++i) r.push_back((s[i] - measured[i]) / measured[i]);
      out.push_back(r);
    }
    return std::optional<std::vector<Residuals>>(out);
  };
}

// Two JCT-like quantities of (prefill efficiency, storage overhead per block): the first mostly storage
// bound, the second mostly compute bound, both nonlinear.
Vec two_jcts(const Vec& x) {
  return {5000 + 1.3e8 * x[1] + 300 / x[0], 100 + 2000 / x[0] + 3e7 * x[1]};
}

const Vec& best_x(const FitResult& r) {
  return r.evaluations.at(*r.best).x;
}

}  // namespace

TEST_CASE("Fit search: two parameters, minimum inside the box -> recovered to 1e-3 in few evaluations",
          "[unit][calibrate]") {
  const Vec truth = {0.39, 38e-6};
  FitProblem p{{0.2, 0}, {0.8, 100e-6}, {0.5, 50e-6}};
  FitOptions o;
  o.max_evaluations = 40;
  const FitResult r = fit_least_squares(p, o, relative(two_jcts, two_jcts(truth)));
  REQUIRE(r.best);
  CHECK(r.stop == FitStop::kStep);
  CHECK(best_x(r)[0] == Approx(truth[0]).epsilon(1e-3));
  CHECK(best_x(r)[1] == Approx(truth[1]).epsilon(1e-3));
  CHECK(r.evaluations.at(*r.best).objective < 1e-8);
  CHECK(r.evaluations.size() <= 20);
  // The model's sensitivities near the fit: d(first)/d(overhead) > 0, d(second)/d(efficiency) < 0.
  REQUIRE(r.jacobian.size() == 2);
  CHECK(r.jacobian[0][1] > 0);
  CHECK(r.jacobian[1][0] < 0);
}

TEST_CASE("Fit search: three parameters, minimum inside the box -> recovered to 1e-3", "[unit][calibrate]") {
  const auto sim = [](const Vec& x) {
    return Vec{std::exp(x[0]) + x[1] * x[2], 10 / (x[1] + 1) + x[0], x[2] * x[2] + x[0] * x[1], 3 + x[2]};
  };
  const Vec truth = {0.7, 2.5, 1.2};
  FitProblem p{{0, 1, 0.5}, {2, 4, 3}, {1, 2.5, 1.75}};
  FitOptions o;
  o.max_evaluations = 80;
  const FitResult r = fit_least_squares(p, o, relative(sim, sim(truth)));
  REQUIRE(r.best);
  for (size_t j = 0; j < 3; ++j) CHECK(best_x(r)[j] == Approx(truth[j]).epsilon(1e-3));
}

TEST_CASE(
    "Fit search: the best value lies beyond a bound -> the bound, the other parameter at its best there",
    "[unit][calibrate]") {
  // Measured at efficiency 0.15, below the box's 0.2.
  const Vec measured = two_jcts({0.15, 38e-6});
  FitProblem p{{0.2, 0}, {0.8, 100e-6}, {0.5, 50e-6}};
  FitOptions o;
  o.max_evaluations = 60;
  o.step_tol = 1e-4;
  const FitResult r = fit_least_squares(p, o, relative(two_jcts, measured));
  REQUIRE(r.best);
  CHECK(best_x(r)[0] == Approx(0.2).margin(1e-3 * 0.6));
  // The overhead that fits best with the efficiency at 0.2, by a scan of its range.
  double scan_best = 0, scan_value = 1e300;
  for (int k = 0; k <= 100000; ++k) {
    const double x1 = 1e-4 * k / 100000;
    const Vec s = two_jcts({0.2, x1});
    double f = 0;
    for (size_t i = 0; i < 2; ++i) f += std::pow((s[i] - measured[i]) / measured[i], 2);
    if (f < scan_value) {
      scan_value = f;
      scan_best = x1;
    }
  }
  CHECK(best_x(r)[1] == Approx(scan_best).margin(1e-3 * 100e-6));
  CHECK(r.evaluations.at(*r.best).objective == Approx(scan_value).epsilon(1e-3));
  CHECK(r.evaluations.at(*r.best).objective > 1e-4);  // it does not fit, and says so by its residuals
}

TEST_CASE("Fit search: two measurements of one quantity that contradict -> the least-squares compromise",
          "[unit][calibrate]") {
  // JCT = 100 / x measured as 250 (x = 0.4) and as 200 (x = 0.5): the sum of squared relative residuals is
  // least at JCT = 0.009 / 4.1e-5 = 219.51, x = 0.45556, residuals -12.2% and +9.8%.
  const auto sim = [](const Vec& x) { return Vec{100 / x[0], 100 / x[0]}; };
  FitProblem p{{0.2}, {0.8}, {0.5}};
  const FitResult r = fit_least_squares(p, FitOptions{}, relative(sim, {250, 200}));
  REQUIRE(r.best);
  const double s = 0.009 / 4.1e-5;
  CHECK(best_x(r)[0] == Approx(100 / s).epsilon(1e-3));
  CHECK(r.evaluations.at(*r.best).r[0] == Approx(s / 250 - 1).margin(1e-3));
  CHECK(r.evaluations.at(*r.best).r[1] == Approx(s / 200 - 1).margin(1e-3));
  CHECK(r.stop == FitStop::kStep);
}

TEST_CASE(
    "Fit search: same evaluations -> same candidates in the same order, in batches of several candidates",
    "[unit][calibrate]") {
  const Vec measured = two_jcts({0.39, 38e-6});
  FitProblem p{{0.2, 0}, {0.8, 100e-6}, {0.5, 50e-6}};
  int batches = 0;
  const FitResult a = fit_least_squares(p, FitOptions{}, relative(two_jcts, measured, &batches));
  const FitResult b = fit_least_squares(p, FitOptions{}, relative(two_jcts, measured));
  REQUIRE(a.evaluations.size() == b.evaluations.size());
  for (size_t i = 0; i < a.evaluations.size(); ++i) CHECK(a.evaluations[i].x == b.evaluations[i].x);
  CHECK(batches < static_cast<int>(a.evaluations.size()));  // the first batch holds n + 1 candidates
  // Every candidate is rounded to 7 significant digits (its name on disk).
  for (const auto& e : a.evaluations)
    for (double v : e.x) CHECK(v == round_significant(v, 7));
}

TEST_CASE("Fit search: the budget or the evaluator stops it -> the best so far and the reason",
          "[unit][calibrate]") {
  const Vec measured = two_jcts({0.39, 38e-6});
  FitProblem p{{0.2, 0}, {0.8, 100e-6}, {0.5, 50e-6}};
  FitOptions o;
  o.max_evaluations = 4;
  const FitResult r = fit_least_squares(p, o, relative(two_jcts, measured));
  CHECK(r.stop == FitStop::kBudget);
  CHECK(r.evaluations.size() <= 4);
  REQUIRE(r.best);

  int calls = 0;
  const FitEvaluate inner = relative(two_jcts, measured);
  const FitEvaluate once = [&](const std::vector<Vec>& xs) -> std::optional<std::vector<Residuals>> {
    if (calls++ > 0) return std::nullopt;
    return inner(xs);
  };
  const FitResult s = fit_least_squares(p, FitOptions{}, once);
  CHECK(s.stop == FitStop::kStopped);
  CHECK(s.evaluations.size() == 3);
}
