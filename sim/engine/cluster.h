// Cluster: the engines, node I/O queues and the request table of one run, and the actors that move
// requests through them (DESIGN.md, "Engines and the life of a turn"). Actors are per engine and per node
// (read lanes); requests are plain data. Everything a transfer does rides a SimGrid comm on the platform's
// routes, so link sharing comes from SimGrid.
//
// Life of a turn: issue -> place (scheduler) -> read side (read-path policy) -> storage read into the
// chosen node's buffer (read lanes) -> PE forward batches (layerwise: load KV to the GPU, compute,
// push KV to the DE buffer) -> DE loader (HBM allocation, H2D) -> continuous decode batch -> done -> the
// agent's next turn. Persistence: appended tokens' KV from the DE buffer, generated KV per full block.
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/recorder.h"
#include "sim/engine/request.h"
#include "sim/metrics/link_stats.h"
#include "sim/platform/handles.h"
#include "sim/policy/read_path.h"
#include "sim/policy/scheduler.h"
#include "sim/workload/agents.h"

namespace sim::metrics {
class Timeline;
}  // namespace sim::metrics

namespace sim::engine {

struct NodeState {
  int id = 0;
  std::deque<std::pair<RequestId, double>> read_queue;  // (request, bytes) waiting for a lane
  double buffer_used = 0;                               // DRAM buffer bytes held
  double buffer_peak = 0;
  int reads_in_flight = 0;
  std::vector<int> waiting_pes;  // PEs whose ready requests wait for room in this (decode) node's buffer
  simgrid::s4u::ConditionVariablePtr cv;  // read lanes wait here
};

struct PrefillEngineState {
  int id = 0, node = 0, gpu = 0;
  int pass_group = 0;           // the DP-attention group whose forward passes it runs in (shares its cv)
  std::deque<RequestId> ready;  // KV in a buffer: may join a forward batch
  double busy_s = 0;            // compute time
  simgrid::s4u::ConditionVariablePtr cv;  // the pass group's
};

// A request's share of a forward pass.
struct PassItem {
  RequestId id;
  cost::Chunk chunk;
};

struct DecodeEngineState {
  int id = 0, node = 0, gpu = 0;
  std::deque<RequestId> waiting;  // prompt KV complete in the DE buffer: waiting for HBM + H2D
  std::vector<RequestId> joins;   // in HBM: join the batch at the next step
  std::vector<RequestId> batch;
  double busy_s = 0;
  bool whole_claimed = false;     // a request larger than the HBM claimed this DE (queued schedulers)
  double persist_gpu_bytes = 0;   // generated KV waiting for D2H + persist
  double persist_dram_bytes = 0;  // appended KV in the DE buffer waiting for persist
  int max_batch = 0;
  simgrid::s4u::ConditionVariablePtr cv_loader, cv_decode, cv_persist;
};

// Trace replay (workload.trace_format mooncake | azure): one turn with its tokens given by the trace
// rather than derived from the agent's context. REQUIRES: hit >= 0, miss >= 1, gen >= 1.
struct ReplayTurn {
  double arrival_s = 0;  // the trace's arrival time
  double hit = 0;        // prompt tokens read from storage
  double miss = 1;       // prompt tokens computed
  double gen = 1;        // tokens generated
};

class Cluster {
 public:
  // All references must outlive the cluster. REQUIRES: the platform of `h` is built.
  Cluster(const config::ScenarioConfig& sc, const platform::PlatformHandles& h,
          const std::vector<workload::Agent>& agents, std::unique_ptr<policy::SchedulerPolicy> scheduler,
          std::unique_ptr<policy::ReadPathPolicy> read_path, Recorder* recorder, metrics::LinkStats* links);

  // Online mode: agent i's first turn is issued at arrivals[i] (seconds, non-decreasing) instead of 0.
  // REQUIRES: before start(); arrivals.size() == number of agents.
  void set_arrivals(std::vector<double> arrivals);
  // Trace replay: the sessions replace the agents (session s is agent s). Turn k of a session is issued at
  // max(its arrival_s, the time turn k-1 finished) (open loop per session). REQUIRES: before start();
  // every session non-empty, turns in arrival order.
  void set_replay(std::vector<std::vector<ReplayTurn>> sessions);
  // outputs.timeline: forward passes, decode spans and the sampled agents' turns go to `tl` (nullptr = off,
  // the default: one pointer test per pass, plan and finished prefill). REQUIRES: before start(); `tl`
  // outlives the run and has its layout set (Timeline::set_layout).
  void set_timeline(metrics::Timeline* tl) { timeline_ = tl; }

  // Spawns every actor; the driver (arrivals_driver.cpp) issues each agent's first turn at its arrival
  // time (0 offline), and in online mode a monitor evaluates the stop rules (workload.online).
  void start();

  const std::vector<PrefillEngineState>& pes() const { return pes_; }
  const std::vector<DecodeEngineState>& des() const { return des_; }
  const std::vector<NodeState>& nodes() const { return nodes_; }
  // True when sim.time_limit_s stopped the run before every turn completed.
  bool timed_out() const { return timed_out_; }
  // Why the run ended: "all_turns_done", "time_limit", "ttft_slo" or "steady_state" (workload.online).
  const std::string& stopped_by() const { return stopped_by_; }
  int agents_arrived() const { return agents_arrived_; }
  // Simulated time at which a stop rule fired or the last turn finished (in-flight work may end later).
  double stopped_at_s() const { return stopped_at_s_; }
  double kv_bytes_per_token() const { return kv_token_; }
  // What requests still hold at the end of a run: DE HBM held or promised (summed over DEs) and DRAM
  // buffer bytes (summed over nodes). Both are 0 after a complete run; anything else is a leak.
  double de_hbm_held_bytes() const;
  double dram_buffer_held_bytes() const;

 private:
  // arrivals_driver.cpp: the one actor that releases turns at their times, and the online monitor.
  void driver_loop();
  void monitor_loop();
  // Queues agent's next turn for release at time t (the driver wakes up for it).
  void release_at(double t, int agent);
  // Mean TTFT over (now - window, now]: turns whose first token came in it count their TTFT, turns still
  // waiting for their first token count their age. Returns -1 when fewer than min_turns turns count.
  double windowed_ttft(double window_s, int min_turns) const;
  void stop(const char* reason);
  int num_agents() const {
    return replay_.empty() ? static_cast<int>(agents_.size()) : static_cast<int>(replay_.size());
  }
  int num_turns(int agent) const {
    return replay_.empty() ? agents_[agent].num_turns : static_cast<int>(replay_[agent].size());
  }
  // cluster.cpp: dispatch.
  void issue_turn(int agent);
  // Gives a request its engines (and their loads), chooses its read side and queues its reads.
  void assign(RequestId id, int pe, int de);
  void start_reads(RequestId id);
  // dispatch.cpp: queued schedulers (DualPath §6.1). Requests wait in pe_queue_, then de_queue_, then a
  // DE group's private queue; each engine group fetches on the fetch period's ticks when its
  // fetch could change something (new requests, or load left its engines).
  void pe_fetcher(int group);
  void de_fetcher(int group);
  // Sleeps to the group's next fetch tick: group g of n fetches at (k + g / n) x policy.fetch_period_s.
  void wait_fetch_tick(int group, int groups);
  void mark_pe_group(int group);
  void mark_de_group(int group);
  policy::RequestInfo info(RequestId id) const;
  void on_read_done(RequestId id, int node, double bytes, double tokens);
  void mark_ready(RequestId id);
  void on_prefill_done(RequestId id);
  void on_turn_done(RequestId id, double t_done);
  // The policies' view: kept current as loads change (seq, tok, free HBM, read queues), never rebuilt.
  const policy::ClusterView& view() {
    view_.now = engine_now();
    return view_;
  }
  static double engine_now();
  policy::EngineLoad& pe_load(int pe) { return view_.pes[pe]; }
  policy::EngineLoad& de_load(int de) { return view_.des[de]; }
  double& read_q(int node) { return view_.read_q[node]; }
  // Actors.
  void read_lane(int node);           // storage_reader.cpp
  void prefill_loop(int pass_group);  // prefill_engine.cpp
  bool pe_has_work(const PrefillEngineState& pe) const;
  void form_batch(PrefillEngineState& pe, std::vector<PassItem>& batch, std::vector<cost::Chunk>& chunks);
  void decode_loader(int de);  // decode_engine.cpp
  void decode_loop(int de);    // decode_engine.cpp
  void persist_loop(int de);   // decode_engine.cpp
  // Locks the cluster mutex, then waits on `cv` while `blocked()` holds and the run is not over, and
  // returns the held lock. Checking under the lock matters: taking a SimGrid mutex yields, so a condition
  // checked before locking may change (and its notification be lost) before the wait starts. Callers take
  // their work under the lock, then unlock before any transfer or sleep.
  template <class Blocked>
  std::unique_lock<simgrid::s4u::Mutex> lock_when(const simgrid::s4u::ConditionVariablePtr& cv,
                                                  Blocked blocked) {
    std::unique_lock<simgrid::s4u::Mutex> lock(*mutex_);
    while (!finished_ && blocked()) cv->wait(lock);
    return lock;
  }
  void finish();
  // Counts a timed activity (compute sleep, decode plan) in flight; the caller decrements when it ends.
  void timed_started() {
    rec_->timed_activities++;
    rec_->timed_in_flight++;
    rec_->peak_activities = std::max(rec_->peak_activities, rec_->timed_in_flight + links_->in_flight());
  }
  void free_buffer(int node, double bytes);
  // DE buffer space for a request's whole prompt KV, reserved before its first byte lands there: by the
  // first DE-side storage read, or by the PE when it takes a PE-path request into a batch. Whatever holds
  // a DE buffer can then finish without more of it, so a full buffer delays but never deadlocks.
  // Returns false (nothing reserved) when the buffer is full.
  bool reserve_de_buffer(RequestId id);
  bool de_buffer_fits(RequestId id) const;
  void queue_persist(DecodeEngineState& de, double gpu_bytes, double dram_bytes);

  const config::ScenarioConfig& sc_;
  const platform::PlatformHandles& h_;
  const std::vector<workload::Agent>& agents_;
  std::unique_ptr<policy::SchedulerPolicy> scheduler_;
  std::unique_ptr<policy::ReadPathPolicy> read_path_;
  Recorder* rec_;
  metrics::LinkStats* links_;  // every transfer goes through it (byte accounting)
  metrics::Timeline* timeline_ = nullptr;

  double kv_token_ = 0;        // KV bytes per token, all layers
  double kv_token_layer_ = 0;  // KV bytes per token per layer
  double pe_hbm_kv_ = 0;       // PE HBM for KV (Basic: whole batch; layerwise: two layers)
  double de_hbm_kv_ = 0;       // DE HBM for KV (the decode batch)
  RequestTable table_;
  std::vector<int> next_turn_;   // per agent
  std::vector<double> context_;  // per agent: tokens of context so far (the next turn's hit)
  std::vector<NodeState> nodes_;
  std::vector<PrefillEngineState> pes_;
  std::vector<DecodeEngineState> des_;
  policy::ClusterView view_;  // seq/tok per engine, free HBM per DE, read_q per node (tokens)
  std::vector<std::vector<int>> pass_groups_;  // PEs per DP-attention group
  // Queued scheduling: engines per group, waiting queues, whether a group's next fetch may assign.
  std::vector<std::vector<int>> pe_sched_groups_, de_sched_groups_;
  std::vector<int> pe_group_of_node_;  // per prefill node: its PE group
  std::deque<RequestId> pe_queue_, de_queue_;
  std::vector<std::deque<RequestId>> de_private_;
  std::vector<double> de_private_tok_;
  std::vector<char> pe_dirty_, de_dirty_;
  std::vector<simgrid::s4u::ConditionVariablePtr> pe_fetch_cv_, de_fetch_cv_;
  // Releases and stop rules (arrivals_driver.cpp).
  std::vector<double> arrivals_;                        // per agent: first-turn time (empty: all at 0)
  std::vector<std::vector<ReplayTurn>> replay_;         // trace replay sessions (empty: agents)
  std::vector<std::pair<double, int>> releases_;        // min-heap of (time, agent) on std::greater
  std::vector<std::pair<double, float>> first_tokens_;  // (time of first token, TTFT), online only
  int waiting_first_ = 0;                               // issued turns without a first token
  double waiting_first_issue_sum_ = 0;                  // sum of their issue times
  std::vector<std::pair<double, double>> steady_log_;   // (check time, windowed TTFT) for the steady rule
  int agents_arrived_ = 0;
  std::string stopped_by_ = "all_turns_done";
  double stopped_at_s_ = 0;
  int agents_left_ = 0;
  bool finished_ = false;
  bool timed_out_ = false;
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr cv_done_;
};

}  // namespace sim::engine
