#include "sim/workload/scaling.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace sim::workload {

namespace {

int32_t scaled(int32_t tokens, double scale) {
  const double x = std::max(1.0, std::round(static_cast<double>(tokens) * scale));
  return static_cast<int32_t>(std::min(x, static_cast<double>(kMaxTurnTokens)));
}

}  // namespace

Trajectory scale_trajectory(const Trajectory& t, double append_scale, double gen_scale, int64_t max_len) {
  SIM_CHECK(append_scale > 0 && gen_scale > 0 && max_len >= 2, "scale {} {} max_len {}", append_scale,
            gen_scale, max_len);
  Trajectory out{t.id, {}};
  int64_t context = 0;
  for (const Turn& turn : t.turns) {
    Turn s{scaled(turn.append, append_scale), scaled(turn.gen, gen_scale), turn.think_s};
    if (context + s.append + s.gen > max_len) {
      if (!out.turns.empty()) break;
      // A first turn alone past max_len: cut to fit.
      if (s.gen > max_len - 1) s.gen = 1;
      s.append = static_cast<int32_t>(max_len - s.gen);
    }
    context += s.append + s.gen;
    out.turns.push_back(s);
  }
  return out;
}

std::vector<Trajectory> scale_trajectories(const std::vector<Trajectory>& ts, double append_scale,
                                           double gen_scale, int64_t max_len) {
  std::vector<Trajectory> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(scale_trajectory(t, append_scale, gen_scale, max_len));
  return out;
}

int64_t max_total_tokens(const std::vector<Trajectory>& ts) {
  SIM_CHECK(!ts.empty(), "no trajectories");
  int64_t m = 0;
  for (const auto& t : ts) m = std::max(m, total_tokens(t));
  return m;
}

}  // namespace sim::workload
