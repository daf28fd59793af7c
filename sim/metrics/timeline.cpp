#include "sim/metrics/timeline.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <system_error>
#include <tuple>

#include "sim/core/check.h"

namespace sim::metrics {

namespace {

// Simulated seconds -> integer nanoseconds (finite inputs; the window bounds them).
int64_t to_ns(double t_s) {
  return std::llround(t_s * 1e9);
}

void put(std::string& out, std::string_view s) {
  out.append(s);
}

template <class T>
void put_number(std::string& out, T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // doubles: the shortest round-trip form
  out.append(buf, r.ptr);
}

// ns -> the microseconds of "ts"/"dur", printed exactly with 3 decimals. REQUIRES: ns >= 0.
void put_us(std::string& out, int64_t ns) {
  put_number(out, ns / 1000);
  const int frac = static_cast<int>(ns % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

// Sort rank at equal ts: metadata, then complete events, then counters.
int rank(char ph) {
  return ph == 'M' ? 0 : ph == 'X' ? 1 : 2;
}

}  // namespace

Timeline::Timeline(const TimelineOptions& options) : options_(options) {
  SIM_CHECK(options.start_s >= 0 && options.end_s > options.start_s && options.max_events >= 1 &&
                options.request_every >= 1,
            "bad timeline options: window [{}, {}] s, max_events {}, request_every {}", options.start_s,
            options.end_s, options.max_events, options.request_every);
  start_ns_ = to_ns(options.start_s);
  end_ns_ = to_ns(std::min(options.end_s, 1e9));  // 1e9 s: far beyond any run, and no int64 overflow
}

int Timeline::intern(std::string_view s) {
  auto it = name_ids_.find(s);
  if (it != name_ids_.end()) return it->second;
  const int id = static_cast<int>(names_.size());
  names_.emplace_back(s);
  name_ids_.emplace(names_.back(), id);
  return id;
}

void Timeline::name_process(int pid, std::string name, std::string thread_prefix, int tid_base) {
  processes_[pid] = {std::move(name), std::move(thread_prefix), tid_base};
}

void Timeline::name_thread(int pid, int tid, std::string name) {
  threads_[{pid, tid}] = std::move(name);
}

void Timeline::set_args(Event& e, const TimelineArg* args, size_t nargs) {
  e.nargs = static_cast<uint8_t>(std::min<size_t>(nargs, kMaxArgs));
  for (int i = 0; i < e.nargs; ++i) e.args[i] = {intern(args[i].key), args[i].value};
}

void Timeline::push(const Event& e, bool needs_thread) {
  Event meta;
  meta.ph = 'M';
  meta.ts_ns = start_ns_;
  meta.pid = e.pid;
  meta.tid = e.tid;
  const auto proc = processes_.find(e.pid);
  const bool name_proc = proc != processes_.end() && named_processes_.count(e.pid) == 0;
  std::string thread;
  if (needs_thread && named_threads_.count({e.pid, e.tid}) == 0) {
    const auto th = threads_.find({e.pid, e.tid});
    if (th != threads_.end())
      thread = th->second;
    else if (proc != processes_.end() && !proc->second.thread_prefix.empty())
      thread = fmt::format("{}{}", proc->second.thread_prefix, e.tid - proc->second.tid_base);
  }
  const size_t need = 1 + (name_proc ? 2 : 0) + (thread.empty() ? 0 : 1);
  if (dropped_ > 0 || events_.size() + need > options_.max_events) {
    if (dropped_++ == 0) truncated_at_s_ = static_cast<double>(e.ts_ns) / 1e9;
    return;
  }
  if (name_proc) {
    named_processes_.insert(e.pid);
    meta.name = intern("process_name");
    meta.label = intern(proc->second.name);
    events_.push_back(meta);
    meta.name = intern("process_sort_index");
    meta.label = -1;
    meta.nargs = 1;
    meta.args[0] = {intern("sort_index"), static_cast<double>(e.pid)};
    events_.push_back(meta);
  }
  if (!thread.empty()) {
    named_threads_.insert({e.pid, e.tid});
    meta.name = intern("thread_name");
    meta.label = intern(thread);
    meta.nargs = 0;
    events_.push_back(meta);
  }
  events_.push_back(e);
}

void Timeline::span(int pid, int tid, std::string_view name, double t0_s, double t1_s,
                    const TimelineArg* args, size_t nargs) {
  if (!std::isfinite(t0_s) || !std::isfinite(t1_s)) return;
  int64_t t0 = to_ns(std::clamp(t0_s, 0.0, 1e9));
  int64_t t1 = to_ns(std::clamp(std::max(t1_s, t0_s), 0.0, 1e9));
  if (t1 < start_ns_ || t0 > end_ns_) return;  // outside the window
  if (dropped_ > 0) {
    dropped_++;
    return;
  }
  t0 = std::max(t0, start_ns_);
  t1 = std::min(t1, end_ns_);
  Event e;
  e.ph = 'X';
  e.ts_ns = t0;
  e.dur_ns = t1 - t0;
  e.pid = pid;
  e.tid = tid;
  e.name = intern(name);
  set_args(e, args, nargs);
  push(e, true);
}

void Timeline::complete(int pid, int tid, std::string_view name, double t_s, double dur_s,
                        const TimelineArg* args, size_t nargs) {
  span(pid, tid, name, t_s, t_s + (std::isfinite(dur_s) ? std::max(0.0, dur_s) : 0.0), args, nargs);
}

void Timeline::counter(int pid, int tid, std::string_view name, double t_s, const TimelineArg* args,
                       size_t nargs) {
  if (!std::isfinite(t_s) || t_s < 0) return;
  const int64_t t = to_ns(std::min(t_s, 1e9));
  if (t < start_ns_ || t > end_ns_) return;
  if (dropped_ > 0) {
    dropped_++;
    return;
  }
  Event e;
  e.ph = 'C';
  e.ts_ns = t;
  e.pid = pid;
  e.tid = tid;
  e.name = intern(name);
  set_args(e, args, nargs);
  std::vector<double>& last = last_counter_[{pid, e.name}];
  std::vector<double> values(nargs);
  for (size_t i = 0; i < nargs; ++i) values[i] = args[i].value;
  if (!last.empty() && last == values) return;
  const size_t before = events_.size();
  push(e, false);
  if (events_.size() > before) last.swap(values);
}

void Timeline::set_layout(int prefill_nodes, int decode_nodes, int prefill_gpus, int decode_gpus) {
  nodes_ = prefill_nodes + decode_nodes;
  gpus_ = std::max(prefill_gpus, decode_gpus);
  for (int n = 0; n < nodes_; ++n) {
    name_process(node_pid(n), fmt::format("n{} {}", n, n < prefill_nodes ? "prefill" : "decode"));
    const int gpus = n < prefill_nodes ? prefill_gpus : decode_gpus;
    for (int g = 0; g < gpus; ++g) name_thread(node_pid(n), engine_tid(n, g), fmt::format("gpu{}", g));
  }
  name_process(requests_pid(), "requests", "agent ", agent_tid(0));
  name_process(links_pid(), "links");
}

void Timeline::scenario_event(std::string_view name, double t0_s, double t1_s, double factor) {
  if (!events_named_) {
    name_thread(links_pid(), links_tid(), "events");
    events_named_ = true;
  }
  complete(links_pid(), links_tid(), name, t0_s, t1_s - t0_s, {{"factor", factor}});
}

void Timeline::turn_first_token(const TurnTimes& t) {
  const int pid = requests_pid(), tid = agent_tid(t.agent);
  const double read_start = std::max(t.issue, t.ready - t.read_s);
  const TimelineArg tokens[] = {{"hit_tokens", t.hit}, {"miss_tokens", t.miss}};
  if (read_start > t.issue) span(pid, tid, "queue", t.issue, read_start, nullptr, 0);
  if (t.ready > read_start) span(pid, tid, "read", read_start, t.ready, tokens, 1);
  if (t.prefill_start > t.ready) span(pid, tid, "wait", t.ready, t.prefill_start, nullptr, 0);
  if (t.first > t.prefill_start) span(pid, tid, "prefill", t.prefill_start, t.first, tokens + 1, 1);
}

void Timeline::turn_done(const TurnTimes& t) {
  const int pid = requests_pid(), tid = agent_tid(t.agent);
  if (t.decode_join >= 0) {
    if (t.decode_join > t.first) span(pid, tid, "alloc", t.first, t.decode_join, nullptr, 0);
    const TimelineArg gen[] = {{"gen_tokens", t.gen}};
    if (t.done > t.decode_join) span(pid, tid, "decode", t.decode_join, t.done, gen, 1);
  }
  const TimelineArg args[] = {{"hit_tokens", t.hit},
                              {"miss_tokens", t.miss},
                              {"gen_tokens", t.gen},
                              {"ttft_s", t.first - t.issue},
                              {"agent", static_cast<double>(t.agent)}};
  span(pid, tid, fmt::format("turn {}", t.turn), t.issue, t.done, args, 5);
}

std::string Timeline::to_json() const {
  // Sort keys: ts, then rank, then (metadata) process, its own names before its threads' (alphabetical),
  // thread; (complete events) longer first; then recording order.
  struct Key {
    int64_t ts;
    int rank;
    int pid;
    int64_t second;  // M: name order; X: -dur; C: 0
    int tid;
    size_t index;
    bool operator<(const Key& o) const {
      return std::tie(ts, rank, pid, second, tid, index) <
             std::tie(o.ts, o.rank, o.pid, o.second, o.tid, o.index);
    }
  };
  std::vector<int> name_order(names_.size());  // rank of each interned string in alphabetical order
  {
    std::vector<int> ids(names_.size());
    std::iota(ids.begin(), ids.end(), 0);
    std::sort(ids.begin(), ids.end(), [this](int a, int b) { return names_[a] < names_[b]; });
    for (size_t i = 0; i < ids.size(); ++i) name_order[ids[i]] = static_cast<int>(i);
  }
  std::vector<Key> order;
  order.reserve(events_.size());
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    if (e.ph == 'M')
      order.push_back({e.ts_ns, 0, e.pid, name_order[e.name], e.tid, i});
    else
      order.push_back({e.ts_ns, rank(e.ph), 0, e.ph == 'X' ? -e.dur_ns : 0, 0, i});
  }
  std::sort(order.begin(), order.end());
  std::vector<std::string> quoted(names_.size());
  for (size_t i = 0; i < names_.size(); ++i)
    quoted[i] = nlohmann::json(names_[i]).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  nlohmann::json other = {{"generator", "dpsim"},
                          {"time", "ts and dur in microseconds of simulated time"},
                          {"window_start_s", options_.start_s},
                          {"window_end_s", options_.end_s},
                          {"max_events", options_.max_events},
                          {"events", events_.size()},
                          {"truncated", truncated()},
                          {"dropped_events", dropped_},
                          {"truncated_at_s", nullptr},
                          {"request_every", options_.request_every}};
  if (truncated()) other["truncated_at_s"] = truncated_at_s_;
  for (const auto& [k, v] : info_) other[k] = v;
  for (const auto& [k, v] : info_numbers_) other[k] = v;

  std::string out;
  out.reserve(events_.size() * 160 + 1024);
  put(out, "{\"displayTimeUnit\":\"ms\",\"otherData\":");
  put(out, other.dump());
  put(out, ",\"traceEvents\":[");
  for (size_t i = 0; i < order.size(); ++i) {
    const Event& e = events_[order[i].index];
    put(out, i == 0 ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
    out += e.ph;
    put(out, "\",\"name\":");
    put(out, quoted[e.name]);
    put(out, ",\"pid\":");
    put_number(out, e.pid);
    put(out, ",\"tid\":");
    put_number(out, e.tid);
    put(out, ",\"ts\":");
    put_us(out, e.ts_ns);
    if (e.ph == 'X') {
      put(out, ",\"dur\":");
      put_us(out, e.dur_ns);
    }
    if (e.label < 0 && e.nargs == 0) {
      put(out, "}");
      continue;
    }
    put(out, ",\"args\":{");
    if (e.label >= 0) {
      put(out, "\"name\":");
      put(out, quoted[e.label]);
    }
    for (int a = 0; a < e.nargs; ++a) {
      if (a > 0 || e.label >= 0) put(out, ",");
      put(out, quoted[e.args[a].key]);
      put(out, ":");
      const double v = e.args[a].value;
      if (std::isfinite(v))
        put_number(out, v);
      else
        put(out, "null");
    }
    put(out, "}}");
  }
  put(out, "\n]}\n");
  return out;
}

}  // namespace sim::metrics
