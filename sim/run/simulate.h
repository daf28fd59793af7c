// simulate: the library's one entry into a run, from a loaded scenario to its results. `dpsim run` calls it
// (and through it every child run of the many-run commands and the end-to-end tests); a program or a test
// that wants a run in-process calls it too. One per process: SimGrid cannot be reset.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/config/scenario.h"
#include "sim/core/status.h"

namespace sim::run {

// Where a running simulation is, for a progress display.
struct Progress {
  double sim_s = 0;         // simulated time
  int64_t turns_done = 0;   // turns completed
  int64_t turns_total = 0;  // of the workload
  double wall_s = 0;        // wall seconds since simulate() was called
  double eta_s = 0;         // wall seconds left at the pace so far (0 before the first turn ends)
};

struct RunOptions {
  // Called with sim.progress on, at most every 2 s of wall time from 3 s on (and every 5 simulated s at
  // most). Null: no reports. It runs inside the simulation: it must not block.
  std::function<void(const Progress&)> on_progress;
};

// A finished run.
struct Results {
  nlohmann::json json;  // the results JSON (keys in README.md, "Results"); deterministic for a fixed seed
                        // except "run_info", which holds wall-clock figures
  const std::string& stopped_by() const {
    return json.at("summary").at("stopped_by").get_ref<const std::string&>();
  }
  double stopped_at_s() const { return json.at("summary").at("stopped_at_s").get<double>(); }
};

// Builds the workload, the platform and the engine, runs them to the end (all turns done, or a stop rule,
// the time limit, a signal or a stall: Results::stopped_by), and assembles the results. Bad input that
// only shows when the run is assembled (an unreadable trace, a turn over the model's context, an
// unwritable outputs.timeline or outputs.requests, more actors than the system allows) is an error naming
// the scenario and the field, before anything is simulated.
StatusOr<Results> simulate(const config::ScenarioConfig& sc, const RunOptions& options = {});

}  // namespace sim::run
