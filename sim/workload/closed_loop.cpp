#include "sim/workload/closed_loop.h"

#include <algorithm>

namespace sim::workload {

void set_closed_loop_think(std::vector<std::vector<ReplayTurn>>& sessions, const ServiceTime& service_s) {
  for (auto& s : sessions)
    for (size_t k = 0; k < s.size(); ++k)
      s[k].think_s = k == 0 ? 0.0 : std::max(0.0, s[k].arrival_s - s[k - 1].arrival_s - service_s(s[k - 1]));
}

}  // namespace sim::workload
