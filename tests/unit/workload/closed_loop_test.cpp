// Think times of an offline (closed-loop) replay (sim/workload/closed_loop.h), by hand.
#include "sim/workload/closed_loop.h"

#include <catch2/catch.hpp>

using sim::workload::ReplayTurn;

TEST_CASE("Closed-loop replay: think = the arrival gap less the previous turn's service, never below 0",
          "[unit][workload]") {
  auto turn = [](double arrival, double gen) {
    ReplayTurn t;
    t.arrival_s = arrival;
    t.gen = gen;
    return t;
  };
  // Service 1 s per generated token, so gen names the service time.
  std::vector<std::vector<ReplayTurn>> s = {{turn(5, 3), turn(10, 4), turn(12, 1), turn(20, 2)},
                                            {turn(7, 9)}};
  sim::workload::set_closed_loop_think(s, [](const ReplayTurn& t) { return t.gen; });
  CHECK(s[0][0].think_s == 0);  // a first turn: issued at 0
  CHECK(s[0][1].think_s == 2);  // 10 - 5 - 3
  CHECK(s[0][2].think_s == 0);  // 12 - 10 - 4 < 0: at once
  CHECK(s[0][3].think_s == 7);  // 20 - 12 - 1
  CHECK(s[1][0].think_s == 0);
}
