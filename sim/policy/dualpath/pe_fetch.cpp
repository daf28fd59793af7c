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

// Position of engine id in the cyclic order that starts just after `after` (pe_fetch.h).
long cyclic(int id, int after) {
  return id > after ? static_cast<long>(id) - after : static_cast<long>(id) - after + (1L << 40);
}

// a is a better pick than b (pe_fetch.h: least tok, then shorter node read_q, then fewer node tokens,
// then the first id after `after` in cyclic order). node_tok is indexed by node.
bool better(const EngineLoad& a, const EngineLoad& b, const std::vector<double>& read_q,
            const std::vector<double>& node_tok, int after) {
  if (a.tok != b.tok) return a.tok < b.tok;
  if (read_q[a.node] != read_q[b.node]) return read_q[a.node] < read_q[b.node];
  if (node_tok[a.node] != node_tok[b.node]) return node_tok[a.node] < node_tok[b.node];
  return cyclic(a.id, after) < cyclic(b.id, after);
}

// Index into `group` of the best engine in class `want`; -1 if none.
int best_in(const std::vector<EngineLoad>& group, const std::vector<double>& read_q,
            const std::vector<double>& node_tok, double alpha, double beta, int after, PeClass want) {
  int best = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    const EngineLoad& e = group[i];
    if (classify(e, read_q, alpha, beta) != want) continue;
    if (best < 0 || better(e, group[best], read_q, node_tok, after)) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace

PeFetchResult pe_fetch(const std::vector<RequestInfo>& queue_head, std::vector<EngineLoad>& group,
                       const std::vector<double>& read_q, double alpha, double beta, int after,
                       const TokensFn& tokens) {
  PeFetchResult res;
  res.last_engine = after;
  std::vector<double> node_tok(read_q.size(), 0.0);
  for (const EngineLoad& e : group) {
    SIM_CHECK(e.node >= 0 && static_cast<size_t>(e.node) < read_q.size(),
              "engine {} on node {}: read_q has {}", e.id, e.node, read_q.size());
    node_tok[e.node] += e.tok;
  }
  for (size_t q = 0; q < queue_head.size(); ++q) {
    // Classes are recomputed from the current tok_e each time (read_q is fixed for the fetch).
    int pick = best_in(group, read_q, node_tok, alpha, beta, res.last_engine, PeClass::kC2ShortRead);
    if (pick < 0) pick = best_in(group, read_q, node_tok, alpha, beta, res.last_engine, PeClass::kC3LongRead);
    if (pick < 0) {
      res.stop = PeStop::kNoEngine;
      return res;
    }
    const double t = tokens(queue_head[q]);
    SIM_CHECK(t >= 0, "request {}: tokens(r) = {} < 0", queue_head[q].id, t);
    EngineLoad& e = group[pick];
    e.tok += t;
    e.seq += 1;
    node_tok[e.node] += t;
    res.last_engine = e.id;
    res.assignments.push_back({static_cast<int>(q), e.id});
    res.taken++;
  }
  res.stop = PeStop::kQueueEmpty;
  return res;
}

}  // namespace sim::policy::dualpath
