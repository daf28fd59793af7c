// The files a run writes against the files it reads: no output may overwrite an input or another output of
// the same run (pure: paths only; the files need not exist yet).
#pragma once

#include <string>

#include "sim/config/scenario.h"
#include "sim/core/status.h"

namespace sim::config {

// Each output, named as the user gave it: `results` (the results JSON; `results_flag` is how the error names
// it, e.g. "--out"), outputs.requests and outputs.timeline ("" = off), against the scenario file, its trace,
// model, hardware and engine files, and against each other. An error names both paths, e.g.
// "--out scenarios/x.json is the scenario file: an output must not overwrite an input".
Status check_output_paths(const ScenarioConfig& sc, const std::string& results,
                          const std::string& results_flag);

}  // namespace sim::config
