// `dpsim check`: runs each scenario's variants as child processes and evaluates its "expect" bands (format:
// scenarios/README.md, "Expectations"). The report gives every band with the measured and the expected
// value and lists the broken bands.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The command's options, as given.
struct CheckSpec {
  std::vector<std::string> scenarios;  // with an "expect" block each
  int jobs = 0;                        // child runs at a time (0: the number of cores)
  std::string out;                     // keep the runs' results here ("" = a temporary directory, removed)
};

// The verdict fails when a band breaks; a run that fails is bad input (named on Console::err).
StatusOr<Outcome> run_check(const CheckSpec& spec, const Console& console);

}  // namespace sim::study
