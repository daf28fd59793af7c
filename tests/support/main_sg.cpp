// Runner for SimGrid tests: one simulation per TEST_CASE (catch_discover_tests gives each its own process).
#define CATCH_CONFIG_RUNNER
#include <xbt/log.h>

#include <catch2/catch.hpp>

int main(int argc, char* argv[]) {
  xbt_log_control_set("root.thresh:critical");
  return Catch::Session().run(argc, argv);
}
