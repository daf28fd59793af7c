// Timeline: a Chrome trace-event JSON of a run (opens in https://ui.perfetto.dev and chrome://tracing).
// Pure: no SimGrid. Times come in as simulated seconds and go out as microseconds ("ts", "dur").
//
// Bounds (outputs.timeline_* in scenarios/README.md):
//   window  only what overlaps [start_s, end_s] is kept: complete events are clipped to it, counter
//           samples outside it are dropped;
//   cap     at most max_events events are stored, track-naming metadata included. The first event that
//           does not fit stops the recording for good; to_json() then says "truncated": true, how many
//           events were refused and the start time of the first one ("truncated_at_s").
// Memory: O(max_events) (about 120 bytes per stored event), nothing per request or per link.
//
// to_json(): {"displayTimeUnit": "ms", "otherData": {...}, "traceEvents": [...]}, one event per line,
// sorted by ts (metadata, then longer complete events first, then recording order): deterministic.
// dpsim's tracks (set_layout; P+D nodes of g GPUs; ids >= 1, tids unique across processes for Perfetto):
//   pid node+1 "n<node> prefill|decode"  tid 1+node*g+gpu "gpu<gpu>": forward passes, decode spans
//   pid N+1    "requests"                tid N*g+2+agent "agent <a>": the sampled agents' turns
//   pid N+2    "links"                   counter tracks "n<node> <resource>", a series per direction;
//                                        tid N*g+1 "events": the scenario's events as spans
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sim::metrics {

struct TimelineOptions {
  double start_s = 0;          // window start, simulated s (>= 0)
  double end_s = 600;          // window end, simulated s (> start_s)
  size_t max_events = 200000;  // cap on stored events (>= 1)
  int request_every = 1;       // record the turns of agents 0, k, 2k, ... (k >= 1)
};

struct TimelineArg {  // one numeric argument of an event (the key is interned: copied)
  std::string_view key;
  double value;
};

// A turn's milestones in simulated s (-1 = not reached), as sim/engine/request.h keeps them.
struct TurnTimes {
  int agent = 0, turn = 0;
  double hit = 0, miss = 0, gen = 0;  // tokens
  double issue = -1, ready = -1;      // ready: KV in a buffer (reads done)
  double read_s = 0;                  // storage read time (longest side), shown just before `ready`
  double prefill_start = -1, first = -1, decode_join = -1, done = -1;
};

template <class Request>
TurnTimes turn_times(const Request& r) {
  return {r.agent,           r.turn,    r.hit,           r.miss,  r.gen, r.t_issue, r.t_ready, r.read_s,
          r.t_prefill_start, r.t_first, r.t_decode_join, r.t_done};
}

class Timeline {
 public:
  static constexpr int kMaxArgs = 6;  // more args on one event are ignored

  // REQUIRES: 0 <= start_s < end_s, max_events >= 1, request_every >= 1.
  explicit Timeline(const TimelineOptions& options);

  // Track names, stored as "M" events just before a track's first event (unused tracks cost nothing).
  // A thread of `pid` without a name of its own is named thread_prefix + (tid - tid_base), when
  // thread_prefix is not empty.
  void name_process(int pid, std::string name, std::string thread_prefix = "", int tid_base = 0);
  void name_thread(int pid, int tid, std::string name);

  // A complete event ("ph": "X") from t_s lasting dur_s (a negative duration counts as 0).
  void complete(int pid, int tid, std::string_view name, double t_s, double dur_s, const TimelineArg* args,
                size_t nargs);
  void complete(int pid, int tid, std::string_view name, double t_s, double dur_s,
                std::initializer_list<TimelineArg> args = {}) {
    complete(pid, tid, name, t_s, dur_s, args.begin(), args.size());
  }
  // A counter sample ("ph": "C") of the track `name` of `pid`, one series per arg. A sample equal to
  // the track's previous stored one is skipped (a counter holds its value until the next sample).
  void counter(int pid, int tid, std::string_view name, double t_s, const TimelineArg* args, size_t nargs);
  void counter(int pid, int tid, std::string_view name, double t_s, std::initializer_list<TimelineArg> args) {
    counter(pid, tid, name, t_s, args.begin(), args.size());
  }
  // String facts for "otherData" (scenario name, seed...).
  void set_info(const std::string& key, const std::string& value) { info_[key] = value; }
  void set_info(const std::string& key, double value) { info_numbers_[key] = value; }

  // dpsim's layout (top of this file): names its processes and threads.
  // With a hardware file per role the nodes' GPUs differ: thread ids are numbered as if every node had the
  // larger count.
  void set_layout(int prefill_nodes, int decode_nodes, int prefill_gpus, int decode_gpus);
  void set_layout(int prefill_nodes, int decode_nodes, int gpus_per_node) {
    set_layout(prefill_nodes, decode_nodes, gpus_per_node, gpus_per_node);
  }
  int node_pid(int node) const { return node + 1; }
  int engine_tid(int node, int gpu) const { return 1 + node * gpus_ + gpu; }
  int requests_pid() const { return nodes_ + 1; }
  int agent_tid(int agent) const { return nodes_ * gpus_ + 2 + agent; }
  int links_pid() const { return nodes_ + 2; }
  int links_tid() const { return nodes_ * gpus_ + 1; }
  bool sampled_agent(int agent) const { return agent % options_.request_every == 0; }

  // A turn's phases on its agent's track (zero-length phases are left out). At its first token: "queue"
  // (issue -> read start: scheduling, read queueing), "read", "wait" (ready -> first forward pass),
  // "prefill" (passes, chunks, KV push). At its end: "alloc" (HBM wait + H2D), "decode" and the
  // enclosing "turn <k>" with its tokens. A one-token turn calls both at its first token.
  void turn_first_token(const TurnTimes& t);
  void turn_done(const TurnTimes& t);
  // A scenario event that acted over [t0_s, t1_s] (control/events.h), as a span on the "links" process's
  // "events" track (its counters are tracks of their own).
  void scenario_event(std::string_view name, double t0_s, double t1_s, double factor);

  size_t size() const { return events_.size(); }
  bool truncated() const { return dropped_ > 0; }
  uint64_t dropped() const { return dropped_; }
  std::string to_json() const;

 private:
  struct Arg {
    int key = 0;  // interned
    double value = 0;
  };
  struct Event {
    int64_t ts_ns = 0, dur_ns = 0;  // integer ns: nested events still nest after rounding
    int pid = 0, tid = 0;
    int name = 0;    // interned
    int label = -1;  // "M" events: interned args.name (-1: numeric args)
    char ph = 'X';
    uint8_t nargs = 0;
    Arg args[kMaxArgs];
  };
  struct Process {
    std::string name, thread_prefix;
    int tid_base = 0;
  };
  int intern(std::string_view s);
  void set_args(Event& e, const TimelineArg* args, size_t nargs);
  // A complete event over [t0_s, t1_s], clipped to the window.
  void span(int pid, int tid, std::string_view name, double t0_s, double t1_s, const TimelineArg* args,
            size_t nargs);
  void push(const Event& e, bool needs_thread);  // with the metadata naming its track, when not yet stored

  TimelineOptions options_;
  int64_t start_ns_ = 0, end_ns_ = 0;
  std::deque<Event> events_;       // no copies on growth
  std::deque<std::string> names_;  // stable addresses: name_ids_ views them
  std::unordered_map<std::string_view, int> name_ids_;
  std::map<int, Process> processes_;
  std::map<std::pair<int, int>, std::string> threads_;
  std::set<int> named_processes_;
  std::set<std::pair<int, int>> named_threads_;
  std::map<std::pair<int, int>, std::vector<double>> last_counter_;  // (pid, name) -> last stored values
  std::map<std::string, std::string> info_;
  std::map<std::string, double> info_numbers_;
  uint64_t dropped_ = 0;
  double truncated_at_s_ = 0;
  int nodes_ = 0, gpus_ = 1;
  bool events_named_ = false;  // the "events" track has its name
};

}  // namespace sim::metrics
