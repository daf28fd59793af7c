// Recorder: per-turn latency samples and counters, streamed as turns complete (pure; no SimGrid).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/cost/compute_plan.h"

namespace sim::engine {

struct TurnSample {
  float t_first = 0;  // time of the first token (for the SLO's warm-up cut; float: ms-accurate to 1e4 s)
  float ttft = 0;     // first token - issue
  float ttst = -1;    // second token - first token (-1: one-token turn)
  float tpot = -1;    // (done - first) / (gen - 1) (-1: one-token turn)
  float queue = 0;    // issue -> KV ready, minus the read itself (scheduling + read queueing)
  float read = 0;     // storage read time
  float prefill = 0;  // KV ready -> first token (batch wait + forward passes + KV push)
  float alloc = 0;    // first token -> joined the decode batch (HBM wait + H2D)
  // slo.mode = relative (0 otherwise): the turn's unloaded TTFT and TPOT (cost/unloaded.h).
  float ttft_unloaded = 0;
  float tpot_unloaded = 0;
};

// Where a role's GPU time went, in GPU-seconds: the parts of its plans, summed over the GPUs of each pass or
// step (cost/compute_plan.h: compute, exchange, fixed costs, CPU, waiting for the group's slowest GPU), and
// what its passes or steps took beyond their plans (stall: waiting for KV loads and pushes, or a congested
// exchange), once per GPU.
struct TimeSplitSum {
  cost::TimeSplit parts;
  cost::WaitCauses waits;  // parts.imbalance_s by cause (prefill passes; cost::pass_wait_causes)
  double stall_s = 0;
  // `plan`: the parts of `gpus` GPUs' plan, which took `wall` seconds.
  void add(const cost::TimeSplit& plan, double wall, double gpus) {
    parts += plan;
    stall_s += std::max(0.0, gpus * wall - plan.total_s());
  }
  double total_s() const { return parts.total_s() + stall_s; }
};

// The prefill passes of DP-attention groups, summed over passes (summary.prefill_passes): how full they were,
// how even, and what closed each GPU's batch (cost::BatchBound).
struct PassStats {
  int64_t passes = 0;
  double gpus = 0;                 // GPUs in the passes
  double gpus_with_work = 0;       // of them, those with new tokens to compute
  double slowest_over_mean = 0;    // per pass: the slowest GPU's own part of a layer over the GPUs' mean
  int64_t passes_with_cut = 0;     // passes in which some GPU's batch ends in a cut request (a chunk)
  int64_t passes_slowest_cut = 0;  // passes whose slowest GPU's batch ends in one
  int64_t batches = 0;             // GPU batches with work
  int64_t closed_by_quota = 0, closed_by_tokens = 0, closed_by_hbm = 0;  // of them, cut or closed by it
  double tokens = 0;                                                     // new tokens
  double predicted_s = 0;  // the quota's measure (cost/batch_quota.h) over the batches with work
  double attention_s = 0;  // their attention, all layers
  double wall_s = 0;       // the passes' wall time
};

struct Recorder {
  std::vector<TurnSample> turns;
  int64_t turns_completed = 0;
  double prompt_tokens = 0;  // hit + miss over completed turns
  double miss_tokens = 0;
  double recomputed_tokens = 0;  // of miss_tokens: context evicted from storage, computed again
  // With a DRAM tier (cache.dram_bytes), over the turns placed on the links' transport: hit tokens, and
  // those of them taken from a DRAM tier instead of storage.
  double dram_tier_asked_tokens = 0;
  double dram_tier_served_tokens = 0;
  double gen_tokens = 0;
  double hit_bytes_read = 0;    // bytes read from storage
  double hit_bytes_loaded = 0;  // hit KV bytes that reached a PE GPU (loads of hit tokens)
  // Node failures (control/node_failures.h). hit_bytes_read and hit_bytes_loaded count the requests that
  // complete; these count what lost requests read from storage (their reads done, and the part of a read
  // that failed) and loaded to a PE, and the passes a failure undid.
  double lost_bytes_read = 0;
  double lost_bytes_loaded = 0;
  int passes_failed = 0;
  double persist_bytes_lost = 0;     // generated and appended KV a failed node had not persisted
  std::vector<double> bytes_reread;  // per scenario event: storage bytes read by the requests it restarted
  double last_done = 0;              // JCT
  // DE HBM held by completed turns, in byte-seconds: from its promise or allocation to the turn's join
  // of the decode batch (read, prefill, H2D: held, not yet decoding), and from the join to the end.
  double hbm_waiting_byte_s = 0;
  double hbm_decoding_byte_s = 0;
  size_t peak_in_flight = 0;
  int64_t compute_activities = 0;  // GPU executions run to their end (prefill passes, single decode steps)
  int64_t decode_plans = 0;        // decode batch plans (one timed activity each)
  int64_t timed_activities = 0;    // every timed activity (executions, decode plans, persist and fetch waits)
  int timed_in_flight = 0;         // timed activities in progress
  size_t peak_activities = 0;      // max of transfers + timed activities in flight
  // Per forward pass of a DP-attention group of more than one GPU: (start time, max/avg attention time
  // over the group's GPUs). DualPath §7.5's attention balance.
  std::vector<std::pair<float, float>> attention_balance;
  TimeSplitSum prefill_time, decode_time;  // the time_split section of the results
  PassStats prefill_passes;
};

}  // namespace sim::engine
