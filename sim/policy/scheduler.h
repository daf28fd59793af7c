// Inter-engine scheduler policies: which PE and which DE serve a request.
//
// Two kinds (DualPath §6.1):
// - immediate policies (round_robin, least_tokens) place each request as it arrives: place();
// - queued policies (dualpath) keep requests in global waiting queues; the engines of each node form a
//   group that fetches work periodically (policy.fetch_period_s). The engine calls, per fetch,
//   fetch_pe() for a PE group, then (for the requests it placed) route_de() and fetch_de() for the DEs.
//   A request's read side is chosen once it has both engines.
// Policies see only ClusterView snapshots and return decisions; the engine does the accounting.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/core/check.h"
#include "sim/policy/view.h"

namespace sim::policy {

struct Placement {
  int pe = 0;  // index into ClusterView::pes
  int de = 0;  // index into ClusterView::des
};

// What queued policies need to know of the cluster, fixed for a run.
struct SchedulerContext {
  // The prefill nodes' (alpha and beta are a PE node's read rate and a PE GPU's prefill; null in tests that
  // give the thresholds)
  const config::HardwareSpec* hardware = nullptr;
  const config::EngineSpec* engine = nullptr;  // its kernels and storage client (non-null with `hardware`)
  const config::ModelSpec* model = nullptr;
  double alpha_tokens = 0;          // short-read-queue threshold (tokens); 0 = the policy derives it
  double beta_tokens = 0;           // unfinished-token cap of a PE (tokens); 0 = the policy derives it
  double kv_bytes_per_token = 0;    // DE HBM bytes a request's token occupies
  double storage_block_tokens = 0;  // tokens of a storage block (storage/read_rate.h); 0 = large blocks
  int prefill_weight_shards = 0;    // a prefill unit's weight shards (beta's expert work); 0 = the model's
};

// (index into the queue given, engine id) pairs, in assignment order; the indices are 0, 1, ..., n-1 (the
// queue's head is taken in FIFO order).
using Assignments = std::vector<std::pair<int, int>>;

class SchedulerPolicy {
 public:
  virtual ~SchedulerPolicy() = default;
  virtual void configure(const SchedulerContext&) {}
  // Immediate policies. REQUIRES: view has at least one PE and one DE.
  virtual Placement place(const RequestInfo& r, const ClusterView& view) = 0;

  // Queued policies return true and implement the three calls below; the engine calls them only then, so
  // on an immediate policy they stop the run (as the dualpath scheduler's place() does).
  virtual bool queued() const { return false; }
  // One PE group's fetch from the global PE queue (head first): which PE (id in view.pes, one of `group`)
  // takes each request of a prefix of `queue`.
  virtual Assignments fetch_pe(const std::vector<RequestInfo>& queue, const std::vector<int>& group,
                               const ClusterView& view) {
    (void)queue, (void)group, (void)view;
    SIM_CHECK(false, "fetch_pe called on an immediate scheduler (queued() is false)");
    return {};
  }
  // DE phase 1: the DE group (index into `groups`) of every request of the global DE queue.
  // `pending_tok` per group: tokens of requests already in its private queue, not yet on a DE.
  virtual std::vector<int> route_de(const std::vector<RequestInfo>& queue,
                                    const std::vector<std::vector<int>>& groups,
                                    const std::vector<double>& pending_tok, const ClusterView& view) {
    (void)queue, (void)groups, (void)pending_tok, (void)view;
    SIM_CHECK(false, "route_de called on an immediate scheduler (queued() is false)");
    return {};
  }
  // DE phase 2: one DE group's fetch from its private queue: which DE (id in view.des) takes each
  // request of a prefix of `queue`. view.des[].free_hbm is the HBM not yet promised to any request.
  virtual Assignments fetch_de(const std::vector<RequestInfo>& queue, const std::vector<int>& group,
                               const ClusterView& view) {
    (void)queue, (void)group, (void)view;
    SIM_CHECK(false, "fetch_de called on an immediate scheduler (queued() is false)");
    return {};
  }
};

}  // namespace sim::policy
