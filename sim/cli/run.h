// run_scenario: one simulation from a loaded scenario to its results JSON (used by the CLI and e2e tests).
// One per process: SimGrid cannot be reset.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/core/status.h"

namespace sim::cli {

// The results JSON (keys in README.md, "Results"). Deterministic for a fixed seed except "run_info", which
// holds wall-clock figures.
StatusOr<nlohmann::json> run_scenario(const config::ScenarioConfig& sc);

}  // namespace sim::cli
