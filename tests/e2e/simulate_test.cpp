// One door into a run: sim::run::simulate() in this process and `dpsim run` as a subprocess give the same
// results JSON (run_info aside), so the CLI adds nothing to a run and a program that calls the library
// gets exactly what the command line writes.
#include "sim/run/simulate.h"

#include <catch2/catch.hpp>

#include "tests/e2e/support.h"

TEST_CASE("simulate() in-process equals dpsim run", "[simulate]") {
  const std::string scenario = e2e::case_file("io_1p1d.json");
  const auto cli = e2e::run_ok(scenario);
  auto sc = sim::config::load_scenario(scenario, {});
  REQUIRE(sc);
  auto lib = sim::run::simulate(*sc);
  INFO((lib ? std::string() : lib.status().message()));
  REQUIRE(lib);
  CHECK(lib->stopped_by() == "all_turns_done");
  CHECK(e2e::without_run_info(lib->json) == e2e::without_run_info(cli));
  CHECK(lib->json.contains("run_info"));
}
