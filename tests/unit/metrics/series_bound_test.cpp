// The results' series are bounded in length (sim/core/series_bound.h): the interval doubles as often as a
// run's length needs, and points merge by sums or means. Hand-computed cases.
#include "sim/core/series_bound.h"

#include <catch2/catch.hpp>

using sim::core::kMaxSeriesPoints;
using sim::core::merge_factor;
using sim::core::merge_points;
using sim::core::series_interval;

TEST_CASE("Series bound: the scenario's interval until 2,048 points, then doubled as often as needed",
          "[unit]") {
  REQUIRE(kMaxSeriesPoints == 2048);
  CHECK(series_interval(10, 5000) == 10);       // 500 points
  CHECK(series_interval(10, 20480) == 10);      // exactly 2,048
  CHECK(series_interval(10, 20481) == 20);      // 2,049 at 10 s: 1,025 at 20 s
  CHECK(series_interval(10, 100060) == 80);     // 10,006 -> 5,003 -> 2,502 -> 1,251
  CHECK(series_interval(10, 4279002) == 2560);  // 1,672 points, as the long-engine e2e run reports
  CHECK(series_interval(0, 1e9) == 0);          // no series
  CHECK(series_interval(10, 0) == 10);
}

TEST_CASE("Series bound: merged points are sums or means of consecutive groups, the last one shorter",
          "[unit]") {
  const std::vector<double> v = {1, 2, 3, 4, 5};
  CHECK(merge_points(v, 1, true) == v);
  CHECK(merge_points(v, 2, false) == std::vector<double>{3, 7, 5});
  CHECK(merge_points(v, 2, true) == std::vector<double>{1.5, 3.5, 5});
  CHECK(merge_points(v, 4, true) == std::vector<double>{2.5, 5});
  CHECK(merge_factor(10, 80) == 8);
  CHECK(merge_factor(80, 80) == 1);
  CHECK(merge_factor(0, 80) == 1);
}
