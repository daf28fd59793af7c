// DualPath PE scheduling, Algorithm 1 (DualPath §6.1, Fig. 5; PAPER.md §5.2): one fetch of one PE group.
// Pure: works on a snapshot of the group's loads; the caller dispatches the assignments it returns.
// Units: tokens (tok_e, read_q, alpha, beta).
//
// Choices the paper leaves open, made here:
// - tokens(r), what an assignment adds to tok_e, defaults to pe_tokens(r) = hit + miss: the whole prompt,
//   as the engine counts tok_e today (Cluster adds r.hit + r.miss to pe.tok on assignment and removes
//   it when the prefill ends).
// - Membership by read_q is fixed for the whole fetch: read_q is not updated per assignment (PAPER.md
//   §5.2), since the reads of the requests assigned now only start once they are dispatched.
// - Membership by tok_e IS re-evaluated after each assignment: an engine whose tok_e passes beta moves
//   to C1 and receives nothing more in this fetch. Reason: C1 means "never assigned new requests" and
//   beta is the cap on an engine's unfinished tokens. With membership frozen at the start, a group that
//   had one engine at or under beta would take the whole queue in one fetch (the stop "C2 and C3 empty"
//   could then only hold before the first assignment), and beta would bound nothing; requests left in
//   the queue are what lets the next group's fetch take them. An engine is eligible while tok_e <= beta
//   BEFORE an assignment, so it may overshoot beta by at most one request.
#pragma once

#include <functional>
#include <vector>

#include "sim/policy/view.h"

namespace sim::policy::dualpath {

// The engine classes of Algorithm 1.
enum class PeClass {
  kC1Overloaded,  // tok_e > beta: never assigned new requests
  kC2ShortRead,   // read_q of its node <= alpha and tok_e <= beta: preferred
  kC3LongRead,    // read_q of its node > alpha and tok_e <= beta: second choice
};

// What an assignment adds to tok_e.
using TokensFn = std::function<double(const RequestInfo&)>;

// Default tokens(r): the whole prompt, r.hit_tokens + r.miss_tokens (see above).
double pe_tokens(const RequestInfo& r);

// The class of one engine. REQUIRES: 0 <= e.node < read_q.size().
PeClass classify(const EngineLoad& e, const std::vector<double>& read_q, double alpha, double beta);
// The class of each engine of `group`, in the order of `group`.
std::vector<PeClass> classify(const std::vector<EngineLoad>& group, const std::vector<double>& read_q,
                              double alpha, double beta);

struct PeAssignment {
  int queue_index = 0;  // index into queue_head (0 = head)
  int engine = 0;       // EngineLoad::id of the chosen PE
  bool operator==(const PeAssignment& o) const { return queue_index == o.queue_index && engine == o.engine; }
};

enum class PeStop {
  kQueueEmpty,  // every request of queue_head was assigned
  kNoEngine,    // C2 and C3 were both empty (every engine of the group is in C1)
};

struct PeFetchResult {
  std::vector<PeAssignment> assignments;  // in assignment order; queue indices are 0, 1, ..., taken - 1
  int taken = 0;                          // requests assigned = the prefix of queue_head to pop
  PeStop stop = PeStop::kQueueEmpty;
  int last_engine = -1;  // id of the last engine chosen (`after` if none): the next
                         // fetch's `after`
};

// One fetch of one PE group (Algorithm 1). queue_head is the FIFO waiting queue (or its first part),
// index 0 = head. Requests are taken in order; each goes to the engine of least tok_e in C2, else in C3;
// the fetch stops when the queue is exhausted or C2 and C3 are empty.
// Ties on tok_e (the paper leaves them open) go to the engine whose node has the shorter read_q, then
// to the one whose node holds fewer tokens (tok_e summed over the group's engines on it, updated per
// assignment), then to the first EngineLoad::id after `after` in cyclic order (the previous fetch's last
// pick, PeFetchResult::last_engine; -1 = lowest id first). With a group spanning nodes, idle engines
// (tok_e = 0) then take requests in turn across nodes and across fetches, instead of the lowest-numbered
// node taking every request of a lightly loaded cluster while the other nodes' storage NICs idle.
// After each assignment the chosen engine's tok += tokens(r) and seq += 1 IN `group` (the snapshot),
// and its class is re-evaluated (see above).
// REQUIRES: every engine's node indexes read_q; tokens(r) >= 0.
PeFetchResult pe_fetch(const std::vector<RequestInfo>& queue_head, std::vector<EngineLoad>& group,
                       const std::vector<double>& read_q, double alpha, double beta, int after = -1,
                       const TokensFn& tokens = pe_tokens);

}  // namespace sim::policy::dualpath
