// DecodeService: the decode engines (one per GPU of the decode nodes) and the lock-step groups they decode
// in. Per GPU, two actors:
// - loader: takes requests whose prompt KV is complete in the DE buffer (FIFO), gets their HBM (HbmPool;
//   waits while it is full), copies the KV H2D through the GPU's CNIC, frees the buffer, and hands the
//   request to its group, to join the batch at the next step. With the DE buffer in HBM
//   (cluster.de_buffer = hbm, de_buffer.h) the KV is in the HBM already: no H2D, nothing to free;
// - persist: every full block of generated KV (policy.persist_block_tokens) goes D2H then to storage; the
//   appended tokens' KV goes from the DE buffer to storage (from HBM: D2H first, like generated KV).
//   Pending bytes are sent in aggregate, at most once per sim.persist_interval_s (what becomes pending
//   during an interval waits for its end).
// Per decode group (a deployment unit of an EP model, config/units.h: an EP group of a fixed size; each GPU
// alone otherwise), one actor runs the steps. An EP group decodes in lock-step: every layer's dispatch and
// combine cross the whole group, so each step lasts as long as the slowest GPU's attention and dense GEMMs
// plus the group's routed experts (cost/compute_plan.h, decode_group_step). One plan = the steps until the
// earliest request of the group finishes, at a constant step time, as one execution on the group's first GPU
// and, when the group spans nodes, one EP exchange flow through every CNIC of the group (platform/handles.h,
// decode_exchange) paced at a step's bytes per step; the plan ends when both have. A join anywhere in the
// group cuts the plan after the step in progress, and the group re-plans. Requests advance with the
// group's step count (no per-request work per step), so a plan costs O(requests that join or finish).
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <vector>

#include "sim/cost/compute_model.h"
#include "sim/engine/context.h"

namespace sim::engine {

class Dispatcher;

struct DecodeEngineState {
  int id = 0, node = 0, gpu = 0, group = 0;
  std::deque<RequestId> waiting;  // prompt KV complete in the DE buffer: waiting for HBM + H2D
  int batch = 0;                  // requests decoding
  // The batch's context tokens = context_base + batch x the group's step count x tokens per step (each
  // request's prompt and first token, plus the tokens it gained per step since it joined).
  double context_base = 0;
  double own_s = 0;               // its part of a group step (decode_own_s), as of its last batch change
  double busy_s = 0;              // time in the group's steps while it held requests
  double busy_since = 0;          // the group's step time when its batch last became non-empty
  double persist_gpu_bytes = 0;   // KV in HBM waiting for D2H + persist (generated; appended with hbm)
  double persist_dram_bytes = 0;  // appended KV in the DRAM DE buffer waiting for persist
  bool persisting = false;        // a persist is on its way to storage
  double persist_sending = 0;     // its bytes
  int max_batch = 0;
  simgrid::s4u::ConditionVariablePtr cv_loader, cv_persist;
};

// A decode group: its GPUs step together.
struct DecodeGroupState {
  std::vector<int> des;          // its DEs, ascending (a unit: its GPUs, joiners included)
  cost::EpGroup ep;              // its EP group: its live GPUs (they share the experts)
  std::vector<RequestId> joins;  // in HBM: join the batch at the next step
  double steps = 0;              // steps run so far
  double step_time_s = 0;        // time spent in steps so far (the DEs' busy time is read off it)
  int batch = 0;                 // requests decoding in the group
  double slowest_own_s = 0;      // max over its DEs of own_s
  struct Due {                   // a request event at a step count
    double at = 0;
    uint64_t seq = 0;
    RequestId id = 0;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> done;    // last token
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> blocks;  // a full block of generated KV
  uint64_t seq = 0;
  std::vector<int> nodes;  // the nodes of its DEs that serve decode now
  int lead = 0;            // its first DE on such a node: the plans' execution runs on its GPU
  uint64_t epoch = 0;      // the membership epoch that `nodes` and `lead` are of
  std::vector<transport::Transport::Handle> exchange;  // per node, the exchange flow while the group decodes
  double exchange_size = 0, exchange_owed = 0;         // their size; the bytes each owes for the steps so far
  std::vector<double> exchange_sent;                   // scratch: the bytes each has sent
  double exchange_pace = 0;                            // their pace links' bandwidth (B/s); 0 = not set
  simgrid::s4u::ConditionVariablePtr cv;
};

class DecodeService {
 public:
  // One DE per GPU of the decode nodes, numbered node-major in platform order.
  explicit DecodeService(EngineContext& ctx);
  void connect(Dispatcher* dispatcher, TurnEvents* turns) {
    dispatcher_ = dispatcher;
    turns_ = turns;
  }
  void start();
  void wake_all();

  // The request's prefill is done and its whole prompt KV is in its DE buffer (DRAM or HBM).
  void prompt_ready(RequestId id);
  // The decode role's nodes changed (a role change, a failure): each unit's EP group, the HBM left for KV on
  // its DEs and its live nodes follow them; a plan in progress is cut after its step.
  void resize();
  // The decode groups (units of an EP model) and their DEs.
  const std::vector<DecodeGroupState>& groups() const { return groups_; }
  // Whether the DEs on `node` hold no request and have nothing left to persist.
  bool idle(int node) const;
  // A lost request (control/node_failures.h) leaves its DE's queue; its group drops it from the batch when
  // it sees the membership change (wake_all() cuts a plan in progress). No simcall.
  void forget(RequestId id);
  // `node` failed: what its DEs had left to persist is lost (returns the bytes). No simcall.
  double node_down(int node);

  // Adds the busy time of the steps run so far to the DEs still holding requests. Call once, after the run.
  void finish();

  const std::vector<DecodeEngineState>& engines() const { return des_; }
  // The actors start() spawns: a loader and a persister per DE, one per decode group.
  size_t actors() const { return 2 * des_.size() + groups_.size(); }
  const DecodeEngineState& engine(int de) const { return des_[de]; }

 private:
  void loader(int de);
  void group_loop(int group);
  // The group's live nodes, lead DE and EP group, as of the membership now; its decoding DEs go to `changed`
  // (their part of a step is recomputed).
  void reshape(DecodeGroupState& g, std::vector<int>& changed);
  // The joins enter their DEs' batches at the group's current step count; returns the DEs they changed.
  void admit(DecodeGroupState& g, std::vector<int>& changed);
  // The group ran `steps` more steps ending at t_end: full blocks go to persistence, finished requests end.
  void advance(DecodeGroupState& g, double steps, double t_end, std::vector<int>& changed);
  // The request leaves its DE's batch (its DE goes to `changed`).
  void leave_batch(DecodeGroupState& g, const Request& r, std::vector<int>& changed);
  // Drops the lost requests from the group's joins and batch (their DEs go to `changed`).
  void purge_lost(DecodeGroupState& g, std::vector<int>& changed);
  // Recomputes the own part of the changed DEs and the group's slowest.
  void refresh(DecodeGroupState& g, std::vector<int>& changed);
  void persist_loop(int de);
  void queue_persist(DecodeEngineState& de, double gpu_bytes, double dram_bytes);
  // The request generated its last token at t_done.
  void turn_end(RequestId id, double t_done);
  // The group's exchange: per node, one flow for as long as the group decodes, paced by the node's
  // exchange_pace link (platform/handles.h). pace_exchange() sets a plan's pace within sim.pace_band (new
  // flows if none run or those running cannot carry `bytes` more); catch_up_exchange() returns once every
  // flow has sent the bytes of every step so far; stop_exchange() ends the flows (they have sent them all).
  void pace_exchange(DecodeGroupState& g, double bytes, double rate);
  void catch_up_exchange(DecodeGroupState& g, double bytes, double rate);
  void stop_exchange(DecodeGroupState& g);
  static constexpr double kExchangeStreamBytes = 1e13;
  static constexpr double kPaceHorizonS = 0.25;

  EngineContext& c_;
  // Tokens each request gains per step: 1, or with MTP 1 + its expected accepted draft tokens
  // (config::EngineSpec::tokens_per_step): a request's steps, blocks and context count in them.
  const double tokens_per_step_;
  Dispatcher* dispatcher_ = nullptr;
  TurnEvents* turns_ = nullptr;
  // A group's live GPUs (its DEs on nodes that serve decode now; at least 1).
  int live_gpus(const DecodeGroupState& g) const;
  std::vector<DecodeEngineState> des_;
  std::vector<DecodeGroupState> groups_;
};

}  // namespace sim::engine
