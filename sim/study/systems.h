// The paper's three systems (DualPath §7.2) as the --set overrides that define them, complete so that a
// system does not depend on a scenario file's policy block (scenarios/paper/README.md, "Policies"):
//   Basic:    PE-side reads, no layerwise prefill, no DualPath scheduler (round_robin placement) and no
//             compute quota (the paper gives the quota to DualPath and Oracle only, §A.4);
//   DualPath: layerwise prefill, dual-path loading and the paper's scheduler (Algorithm 1, the two-phase DE
//             scheduling and the compute quota over each pass);
//   Oracle:   DualPath with every KV transfer free.
#pragma once

#include <string>
#include <vector>

namespace sim::study {

inline const std::vector<std::string> kBasic = {"policy.read_path=pe", "policy.layerwise=false",
                                                "policy.scheduler=round_robin", "policy.batching=fifo"};
inline const std::vector<std::string> kDualPath = {"policy.read_path=dualpath", "policy.layerwise=true",
                                                   "policy.scheduler=dualpath", "policy.batching=quota"};
inline const std::vector<std::string> kOracle = {"policy.read_path=oracle", "policy.layerwise=true",
                                                 "policy.scheduler=dualpath", "policy.batching=quota"};

}  // namespace sim::study
