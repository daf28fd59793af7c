// `dpsim props`: runs a property grid (scenarios x P:D x policies, plus monotone variants) as child
// `dpsim run`s, in parallel and resumable (a run is reused when its record names the same dpsim build and
// command and its result is complete), then checks the relations of props_relations.h on the results.
// Format: scenarios/props/README.md.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The command's options, as given.
struct PropsStudySpec {
  std::string grid;               // grid JSON
  std::vector<std::string> sets;  // every run, after the grid's own
  int jobs = 0;                   // child runs at a time (0: the number of cores)
  std::string out;                // "" = out/props/<grid name>
};

// Runs the grid and writes DIR/props.json. The report names each relation's checks and each violation with
// its pair of runs and figures; the verdict fails when a violation is not explained within its limit, and is
// bad input when a run exited with 2 (or could not start).
StatusOr<Outcome> run_props(const PropsStudySpec& spec, const Console& console);

}  // namespace sim::study
