// DualPath DE scheduling in two phases (DualPath §6.1; PAPER.md §5.3). Pure: works on snapshots; the
// caller moves the requests between queues and dispatches them.
// Units: tokens (tok_e, len_r, Z), bytes (free_hbm, need(r)).
//
// Definitions the paper leaves open, fixed here:
// - len_r defaults to de_len(r) = hit + miss + gen: every token whose KV the DE holds by the end of the
//   request, as the engine counts tok_e today (Cluster adds r.hit + r.miss + r.gen to de.tok).
// - need(r) = len_r x kv_bytes_per_token: the HBM the decode loader reserves for the request
//   ((hit + miss + gen) x KV bytes per token over all layers).
#pragma once

#include <functional>
#include <vector>

#include "sim/policy/view.h"

namespace sim::policy::dualpath {

// Z's slack factor: Z = kZSlack x (sum_{r in R} len_r + sum_e tok_e) / |E|. The paper's value (§6.1);
// the paper does not explain it (PAPER.md §5.3 records the "5% fragmentation margin" reading as an
// inference, not the paper's word).
constexpr double kZSlack = 1.05;

// A request's token length len_r.
using LenFn = std::function<double(const RequestInfo&)>;

// Default len_r: r.hit_tokens + r.miss_tokens + r.gen_tokens (see above).
double de_len(const RequestInfo& r);

// ---- Phase 1: the global queue to the DE groups' private queues ----
// Each request of global_queue, in order, goes to the group of least total tok_e (ties: lowest group
// index); that group's total then grows by len(r). Returns the group index per request.
// group_tok[g] = sum of tok_e over the DEs of group g; updated in place.
// REQUIRES: group_tok non-empty when global_queue is non-empty; len(r) >= 0.
std::vector<int> de_phase1(const std::vector<RequestInfo>& global_queue, std::vector<double>& group_tok,
                           const LenFn& len = de_len);

// ---- Phase 2: one group's private queue to its DEs ----
struct DeAssignment {
  int queue_index = 0;  // index into private_queue (0 = head)
  int engine = 0;       // EngineLoad::id of the chosen DE
  bool operator==(const DeAssignment& o) const { return queue_index == o.queue_index && engine == o.engine; }
};

enum class DeStop {
  kQueueEmpty,  // every request of private_queue was assigned
  kNoHbm,       // no DE of the group has free_hbm >= need(head)
};

struct DeFetchResult {
  std::vector<DeAssignment> assignments;  // in assignment order; queue indices 0, 1, ..., taken - 1
  int taken = 0;                          // the prefix of private_queue to pop
  int feasible = 0;                       // |R|: requests from the head whose summed need fits the summed
                                          // free HBM (no fragmentation); an upper bound on `taken`
  double z = 0;                           // Z, computed once at the start of the fetch
  DeStop stop = DeStop::kQueueEmpty;
};

// One fetch of one DE group (phase 2):
// 1. R = the longest prefix of private_queue with sum need(r) <= sum_e free_hbm_e.
// 2. Z = kZSlack x (sum_{r in R} len_r + sum_e tok_e) / |E|.
// 3. Pop heads in order. Among the DEs with free_hbm >= need(r): those with tok_e + len_r <= Z are
//    preferred, and the one of least seq_e is chosen (ties: least tok_e, then lowest id); when none
//    qualifies, the high-token DE of least tok_e (ties: lowest id). The chosen DE's seq += 1,
//    tok += len_r, free_hbm -= need(r) IN `des`.
// 4. Stop when no DE has free_hbm >= need(head).
// free_hbm must already exclude the HBM of requests assigned but not yet loaded, or step 4 never stops
// a fetch. A head whose need exceeds every DE's whole free HBM blocks the queue (as in the paper); the
// caller decides what to do with a request larger than an empty DE.
// REQUIRES: des non-empty; kv_bytes_per_token > 0; len(r) >= 0.
DeFetchResult de_phase2(const std::vector<RequestInfo>& private_queue, std::vector<EngineLoad>& des,
                        double kv_bytes_per_token, const LenFn& len = de_len);

}  // namespace sim::policy::dualpath
