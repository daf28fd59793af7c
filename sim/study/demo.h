// `dpsim demo` (what `make run` runs): the paper's hardware and its bottleneck-free range, then the default
// scenario with Basic (`pe`, no layerwise prefill), DualPath and the Oracle side by side, each a child
// `dpsim run`.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The command's options, as given.
struct DemoSpec {
  std::string scenario = "scenarios/paper/ds660b-64k.json";
  std::vector<std::string> sets = {"workload.agents=512"};  // every run
  std::string out_dir = "out/demo";                         // where the results JSONs go
};

// The hardware lines go to Console::out before the runs; the report is the table of the three runs.
StatusOr<Outcome> run_demo(const DemoSpec& spec, const Console& console);

}  // namespace sim::study
