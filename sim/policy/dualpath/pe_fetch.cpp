#include "sim/policy/dualpath/pe_fetch.h"

#include "sim/core/check.h"

namespace sim::policy::dualpath {

double pe_tokens(const RequestInfo& r) {
  return r.hit_tokens + r.miss_tokens;
}

PeClass classify(const EngineLoad& e, const std::vector<double>& read_q, double alpha, double beta) {
  SIM_CHECK(e.node >= 0 && static_cast<size_t>(e.node) < read_q.size(), "engine {} on node {}: read_q has {}",
            e.id, e.node, read_q.size());
  if (e.tok > beta) return PeClass::kC1Overloaded;
  return read_q[e.node] <= alpha ? PeClass::kC2ShortRead : PeClass::kC3LongRead;
}

std::vector<PeClass> classify(const std::vector<EngineLoad>& group, const std::vector<double>& read_q,
                              double alpha, double beta) {
  std::vector<PeClass> out;
  out.reserve(group.size());
  for (const EngineLoad& e : group) out.push_back(classify(e, read_q, alpha, beta));
  return out;
}

namespace {

// Index into `group` of the engine of least tok in class `want`, ties to the lowest id; -1 if none.
int least_tok_in(const std::vector<EngineLoad>& group, const std::vector<double>& read_q, double alpha,
                 double beta, PeClass want) {
  int best = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    const EngineLoad& e = group[i];
    if (classify(e, read_q, alpha, beta) != want) continue;
    if (best < 0 || e.tok < group[best].tok || (e.tok == group[best].tok && e.id < group[best].id))
      best = static_cast<int>(i);
  }
  return best;
}

}  // namespace

PeFetchResult pe_fetch(const std::vector<RequestInfo>& queue_head, std::vector<EngineLoad>& group,
                       const std::vector<double>& read_q, double alpha, double beta, const TokensFn& tokens) {
  PeFetchResult res;
  for (size_t q = 0; q < queue_head.size(); ++q) {
    // Classes are recomputed from the current tok_e each time (read_q is fixed for the fetch).
    int pick = least_tok_in(group, read_q, alpha, beta, PeClass::kC2ShortRead);
    if (pick < 0) pick = least_tok_in(group, read_q, alpha, beta, PeClass::kC3LongRead);
    if (pick < 0) {
      res.stop = PeStop::kNoEngine;
      return res;
    }
    const double t = tokens(queue_head[q]);
    SIM_CHECK(t >= 0, "request {}: tokens(r) = {} < 0", queue_head[q].id, t);
    EngineLoad& e = group[pick];
    e.tok += t;
    e.seq += 1;
    res.assignments.push_back({static_cast<int>(q), e.id});
    res.taken++;
  }
  res.stop = PeStop::kQueueEmpty;
  return res;
}

}  // namespace sim::policy::dualpath
