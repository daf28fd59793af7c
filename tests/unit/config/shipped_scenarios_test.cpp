// Every scenario shipped under scenarios/ loads (a JSON object with "hardware" and "model" is a scenario;
// the model, hardware and grid files beside them are not).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"

TEST_CASE("Shipped scenarios: every one under scenarios/ loads", "[unit]") {
  namespace fs = std::filesystem;
  int scenarios = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(DPSIM_SOURCE_DIR) / "scenarios")) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (!doc.is_object() || !doc.contains("hardware") || !doc.contains("model")) continue;
    INFO(e.path().string());
    const auto sc = sim::config::load_scenario(e.path().string(), {});
    INFO((sc ? std::string() : sc.status().message()));
    CHECK(sc.is_ok());
    scenarios++;
  }
  CHECK(scenarios >= 20);  // the filter above finds the scenarios (24 when this was written)
}
