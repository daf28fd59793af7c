// `dpsim bench` (what `make bench` runs): runs each scenario as a child `dpsim run`, one at a time, and
// reports simulator speed: agent-turns per wall-second, simulated seconds per wall-second, SimGrid activities
// per turn and at peak in flight, and the child's CPU seconds and peak RSS; each scenario's microseconds per
// turn as a ratio of the base scenario's, and its real-time factor (JCT / wall). Writes a JSON atomically.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The command's options, as given.
struct BenchSpec {
  std::vector<std::string> inputs = {"scenarios/bench"};  // scenario files or directories of them
  std::string out = "out/bench.json";
  std::vector<std::string> sets;  // every scenario
  // The scenario (file stem) whose wall microseconds per turn the others are given as a ratio of; empty =
  // the first. Ratios within one bench, on one machine, are what to compare across machines and commits.
  std::string base;
};

// Each scenario's row goes to Console::out as it is measured; the report names the JSON.
StatusOr<Outcome> run_bench(const BenchSpec& spec, const Console& console);

}  // namespace sim::study
