// Unit tests of the small dense linear algebra of the calibration search (sim/study/linear_algebra.h).
#include "sim/study/linear_algebra.h"

#include <catch2/catch.hpp>

using sim::study::box_least_squares;
using sim::study::fit_plane;
using sim::study::least_squares_spread;
using sim::study::singular_values;
using Vec = sim::study::Vector;

TEST_CASE("Linear algebra: box least squares -> the exact minimiser, on a face when the free one is outside",
          "[unit][calibrate]") {
  // |r + J s|^2 with J = I: the free minimiser is -r.
  const std::vector<Vec> eye = {{1, 0}, {0, 1}};
  const Vec s = box_least_squares({-0.1, 0.3}, eye, {-1, -1}, {1, 1});
  CHECK(s[0] == Approx(0.1));
  CHECK(s[1] == Approx(-0.3));
  const Vec t = box_least_squares({-0.1, 0.3}, eye, {-0.05, -0.2}, {0.05, 0.2});
  CHECK(t[0] == Approx(0.05));
  CHECK(t[1] == Approx(-0.2));
  // Coupled: the best point on the face s0 = 0.05 is not the clamp of the free minimiser.
  const std::vector<Vec> j = {{1, 1}, {0, 1}, {1, 0}};
  const Vec u = box_least_squares({-2, 0, -1}, j, {-0.05, -5}, {0.05, 5});
  CHECK(u[0] == Approx(0.05));
  CHECK(u[1] == Approx((2 - 0.05) / 2));  // minimises (s1 - 1.95)^2 + s1^2
  // A zero column (a parameter that changes nothing) gets no step.
  const Vec z = box_least_squares({0.5, 0.2}, {{1, 0}, {0, 0}}, {-1, -1}, {1, 1});
  CHECK(z[0] == Approx(-0.5));
  CHECK(z[1] == Approx(0).margin(1e-9));
}

TEST_CASE("Linear algebra: singular values of small matrices", "[unit][calibrate]") {
  const Vec a = singular_values({{3, 0}, {0, -4}, {0, 0}});
  CHECK(a[0] == Approx(4));
  CHECK(a[1] == Approx(3));
  const Vec b = singular_values({{1, 1}, {1, 1}});
  CHECK(b[0] == Approx(2));
  CHECK(b[1] == Approx(0).margin(1e-12));
  const Vec c = singular_values({{2, 0, 0}, {0, 0, 5}, {0, 1, 0}});
  CHECK(c == Vec{5, 2, 1});
}

TEST_CASE("Linear algebra: a plane through samples -> its coefficients, and the scatter about it",
          "[unit][calibrate]") {
  // y = 1 + 2 z0 - 3 z1 exactly, and a second column with +-0.1 about 5.
  const sim::study::Matrix z = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 1}};
  sim::study::Matrix y;
  const double noise[] = {0.1, -0.1, 0.1, -0.1, 0};
  for (size_t k = 0; k < z.size(); ++k) y.push_back({1 + 2 * z[k][0] - 3 * z[k][1], 5 + noise[k]});
  const auto f = fit_plane(z, y);
  REQUIRE(f);
  CHECK(f->intercept[0] == Approx(1));
  CHECK(f->slope[0][0] == Approx(2));
  CHECK(f->slope[0][1] == Approx(-3));
  REQUIRE(f->rms.size() == 2);
  CHECK(f->rms[0] == Approx(0).margin(1e-12));
  CHECK(f->rms[1] > 0.05);
  CHECK(!fit_plane({{0, 0}, {1, 1}, {2, 2}}, {{1}, {2}, {3}}));  // all on one line of z
}

TEST_CASE("Linear algebra: the spread of a least-squares solution -> sigma through the inverse",
          "[unit][calibrate]") {
  // x = J^-1 v with J = diag(2, 0.5): sigma 0.1 on each value gives 0.05 and 0.2.
  const auto s = least_squares_spread({{2, 0}, {0, 0.5}}, {0.1, 0.1});
  REQUIRE(s);
  CHECK((*s)[0] == Approx(0.05));
  CHECK((*s)[1] == Approx(0.2));
  CHECK(!least_squares_spread({{1, 1}, {1, 1}}, {0.1, 0.1}));
}
