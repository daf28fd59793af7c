// `dpsim trace gen` and `dpsim trace stats` (traces/README.md): a synthetic trajectory set shaped like
// DualPath Table 2 (workload/generator.h) with its achieved averages next to the paper's, and the averages
// and percentiles of a trace file: native trajectories, or a request trace (workload/mooncake.h, azure.h,
// alibaba.h) with its requests, rebuilt sessions, lengths, infinite-cache hit and span.
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/status.h"
#include "sim/study/study.h"
#include "sim/workload/mooncake.h"

namespace sim::study {

// The options of `trace gen`, as given.
struct TraceGenSpec {
  std::string dataset;  // a Table 2 row: 32k, 48k or 64k
  int trajectories = 500;
  uint64_t seed = 1;
  std::string weighting = "trajectory";  // which averages match Table 2: trajectory | turn
  std::string out;                       // JSONL file, written atomically
};

// Writes the set; the report compares its averages with Table 2.
StatusOr<Outcome> trace_gen(const TraceGenSpec& spec);

// The options of `trace stats`, as given.
struct TraceStatsSpec {
  std::string file;
  std::string dataset;                                 // native only, optional: compare with this Table 2 row
  std::string format = "native";                       // native | mooncake | azure | alibaba
  int shared_fanout = workload::kDefaultSharedFanout;  // mooncake only
  bool shared_fanout_given = false;
};

StatusOr<Outcome> trace_stats(const TraceStatsSpec& spec);

}  // namespace sim::study
