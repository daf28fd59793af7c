// summary.units (metrics/results.h): the units of a role and the spread of their GPUs' utilisation.
#include <catch2/catch.hpp>

#include "sim/metrics/results.h"

using sim::metrics::UnitGpu;
using sim::metrics::units_summary;

TEST_CASE("Units summary: two units of two GPUs -> each unit's mean GPU utilisation, their spread",
          "[unit]") {
  // 100 s run. Unit 0: GPUs busy 80 s and 60 s -> 0.7; unit 1: 20 s and 40 s -> 0.3. GPUs in any order.
  const auto j = units_summary(2, {{1, 20}, {0, 80}, {1, 40}, {0, 60}}, 100);
  CHECK(j.at("count") == 2);
  CHECK(j.at("gpus_each") == 2);
  CHECK(j.at("per_unit").at(0).get<double>() == Approx(0.7));
  CHECK(j.at("per_unit").at(1).get<double>() == Approx(0.3));
  CHECK(j.at("utilization").at("mean").get<double>() == Approx(0.5));
  CHECK(j.at("utilization").at("min").get<double>() == Approx(0.3));
  CHECK(j.at("utilization").at("max").get<double>() == Approx(0.7));
  CHECK(j.at("utilization").at("spread").get<double>() == Approx(0.4));
}

TEST_CASE("Units summary: one unit, or a zero-length run -> no spread, no division by zero", "[unit]") {
  const auto one = units_summary(3, {{0, 30}, {0, 60}, {0, 90}}, 100);
  CHECK(one.at("count") == 1);
  CHECK(one.at("utilization").at("mean").get<double>() == Approx(0.6));
  CHECK(one.at("utilization").at("spread").get<double>() == 0);
  const auto none = units_summary(1, {{0, 0}, {1, 0}}, 0);
  CHECK(none.at("per_unit").at(1).get<double>() == 0);
}
