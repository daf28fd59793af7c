// Checks of the RequestTrace contract (sim/workload/request_trace.h) on a trace a reader accepted: the
// Mooncake, Azure and Alibaba harnesses trap when a reader returns a trace that breaks it.
#pragma once

#include <cmath>
#include <vector>

#include "sim/workload/request_trace.h"
#include "tests/fuzz/fuzz_util.h"

namespace sim::fuzz {

inline void check_request_trace(const workload::RequestTrace& t) {
  if (t.requests.empty()) contract_broken("accepted a trace without requests", t.source);
  std::vector<int> next_turn(static_cast<size_t>(t.sessions), 0);
  double last = 0;
  for (const workload::TraceRequest& r : t.requests) {
    if (!std::isfinite(r.arrival_s) || r.arrival_s < last || r.arrival_s < 0)
      contract_broken("arrivals not finite, >= 0 and sorted", t.source);
    last = r.arrival_s;
    if (r.input_tokens < 1 || r.output_tokens < 1 || r.hit_tokens < 0 || r.hit_tokens > r.input_tokens)
      contract_broken("token counts out of range", t.source);
    if (r.session < 0 || r.session >= t.sessions) contract_broken("session id out of range", t.source);
    if (r.turn != next_turn[static_cast<size_t>(r.session)]++)
      contract_broken("turns of a session not 0, 1, 2, ... in arrival order", t.source);
  }
  int multi = 0;
  for (int n : next_turn) {
    if (n == 0) contract_broken("a session id without requests", t.source);
    multi += n >= 2;
  }
  if (multi != t.multi_turn_sessions) contract_broken("multi_turn_sessions miscounted", t.source);
}

}  // namespace sim::fuzz
