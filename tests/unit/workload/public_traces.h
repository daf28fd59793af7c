// The public traces of the repository (traces/public/) as the workload tests read them.
#pragma once

#include <string>

namespace sim::testing {

// The path of traces/public/<name>.
inline std::string public_trace(const char* name) {
  return std::string(DPSIM_SOURCE_DIR) + "/traces/public/" + name;
}

}  // namespace sim::testing
