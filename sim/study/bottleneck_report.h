// `dpsim bottleneck`: the analytic bottleneck-free P/D range of DualPath §4.2 (cost/bottleneck.h) for one
// hardware file, or for prefill nodes of one file and decode nodes of another (the per-role form of
// sim/README.md), with the DE buffer in DRAM (the paper's) or in HBM (cluster.de_buffer = hbm); with P and D
// also the ideal per-link loads there; with a model, the P:D splits of whole deployment units
// (config/units.h) that lie in the range, up to a number of nodes.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// The command's options, as given.
struct BottleneckSpec {
  std::string hardware;            // a path, or a name under models/hardware/ (e.g. hopper-8x400g)
  std::string decode_hw;           // the decode nodes' file ("" = the same)
  std::string de_buffer = "dram";  // dram | hbm
  bool json = false;               // the report as JSON
  bool have_point = false;         // p and d given
  double p = 0, d = 0;             // nodes
  std::string model;               // a path, or a name under models/llm/ ("" = no unit splits)
  int prefill_ep_gpus = -1;        // as cluster.prefill_ep_gpus: -1 = the model's default
  int decode_ep_gpus = -1;         // as cluster.decode_ep_gpus
  int max_nodes = 48;              // the splits listed have P + D <= max_nodes
};

// The report: the range as a table (or JSON), with the loads at P, D when given.
StatusOr<Outcome> bottleneck_report(const BottleneckSpec& spec);

}  // namespace sim::study
