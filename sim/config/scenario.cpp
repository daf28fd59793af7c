#include "sim/config/scenario.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include "sim/config/json_util.h"
#include "sim/config/units.h"
#include "sim/core/paths.h"
#include "sim/cost/compute_model.h"
#include "sim/metrics/request_log.h"
#include "sim/policy/names.h"

namespace sim::config {

namespace {

namespace fs = std::filesystem;

// File references exactly as written in the scenario (echoed into `resolved`).
// clang-tidy's bugprone-exception-escape is a false positive here: clang-tidy 14 follows nlohmann::json's
// noexcept move and destructor into calls that can throw but that they never reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct References {
  std::string hardware;
  std::string hardware_prefill;  // "" = the `hardware` file
  std::string hardware_decode;   // "" = the `hardware` file
  std::string model;
  std::string trace;
  std::string engine;
  nlohmann::json engine_overrides;  // null when absent
};

// Smallest link_degrade factor (read_event).
constexpr double kMinDegradeFactor = 1e-3;

// Largest outputs.timeline_max_events: about 12 GB of events in memory.
constexpr int64_t kMaxTimelineEvents = 100000000;
// Largest workload.append_scale / gen_scale: beyond it every turn of a dataset passes its MaxLen.
constexpr double kMaxScale = 1000;

// Largest P and D: a bound far above any real cluster, so that nodes x GPUs per node (<= 64) fits an int.
constexpr int kMaxNodesPerRole = 1000000;

// An integer in [lo, hi] (the message reads "an integer >= lo" unless it is too large).
int count(JsonReader& r, const char* key, int def, int lo, int hi = INT32_MAX) {
  int64_t x = r.integer(key, def, lo);
  if (x > hi) {
    r.fail(key, fmt::format("an integer >= {} and <= {}", lo, hi), r.raw(key));
    return def;
  }
  return static_cast<int>(x);
}

void read_cluster(JsonReader& r, ClusterConfig& c) {
  const ClusterConfig def;
  c.prefill_nodes = count(r, "prefill_nodes", def.prefill_nodes, 1, kMaxNodesPerRole);
  c.decode_nodes = count(r, "decode_nodes", def.decode_nodes, 1, kMaxNodesPerRole);
  c.dram_buffer_bytes = r.positive("dram_buffer_bytes", def.dram_buffer_bytes);
  c.prefill_dp_group_gpus = count(r, "prefill_dp_group_gpus", def.prefill_dp_group_gpus, 0);
  c.prefill_ep_gpus = count(r, "prefill_ep_gpus", def.prefill_ep_gpus, 0, kMaxNodesPerRole);
  c.decode_ep_gpus = count(r, "decode_ep_gpus", def.decode_ep_gpus, 0, kMaxNodesPerRole);
  c.de_buffer = r.one_of("de_buffer", name(def.de_buffer), {name(DeBuffer::kDram), name(DeBuffer::kHbm)}) ==
                        name(DeBuffer::kHbm)
                    ? DeBuffer::kHbm
                    : DeBuffer::kDram;
}

void read_workload(JsonReader& r, WorkloadConfig& w, std::string& trace) {
  const WorkloadConfig def;
  w.mode = r.one_of("mode", def.mode, {"offline", "online"});
  trace = r.string("trace", def.trace);
  r.object("generator", [&](JsonReader& g) {
    w.generator.dataset = g.one_of("dataset", def.generator.dataset, {"32k", "48k", "64k"});
    w.generator.trajectories = count(g, "trajectories", def.generator.trajectories, 1);
    w.generator.seed = static_cast<uint64_t>(g.integer("seed", static_cast<int64_t>(def.generator.seed), 0));
  });
  w.agents = count(r, "agents", def.agents, 1);
  w.max_turns = count(r, "max_turns", def.max_turns, 0);
  w.aps = r.positive("aps", def.aps);
  if (const nlohmann::json* c = r.raw("aps_change"); c != nullptr && !c->is_null()) {
    if (!c->is_object()) {
      r.fail("aps_change", "an object {\"at_s\": ..., \"aps\": ...} or null", c);
    } else {
      r.object("aps_change", [&](JsonReader& a) {
        w.aps_change_at_s = a.positive("at_s", std::nullopt);
        w.aps_after = a.positive("aps", std::nullopt);
      });
    }
  }
  w.append_scale = r.number("append_scale", def.append_scale, 0, kMaxScale, false);
  w.gen_scale = r.number("gen_scale", def.gen_scale, 0, kMaxScale, false);
  w.trace_format = r.one_of("trace_format", def.trace_format, {"native", "mooncake", "azure", "alibaba"});
  w.over_context = r.one_of("over_context", def.over_context, {"error", "drop"});
  for (const char* k : {"append_scale", "gen_scale"})
    if (r.ok() && w.trace_format != "native" && r.raw(k) != nullptr && r.raw(k)->is_number() &&
        r.raw(k)->get<double>() != 1.0)
      r.fail(k,
             "1 with a request trace (trace_format mooncake, azure or alibaba): scaling applies to "
             "trajectories",
             r.raw(k));
  if (r.ok() && w.trace_format != "native" && trace.empty())
    r.fail("trace_format", "\"native\" when workload.trace is empty (only native traces are generated)",
           r.raw("trace_format"));
  r.object("online", [&](JsonReader& o) {
    const OnlineConfig d;
    OnlineConfig& c = w.online;
    c.stop_on_slo = o.boolean("stop_on_slo", d.stop_on_slo);
    c.slo_window_s = o.positive("slo_window_s", d.slo_window_s);
    c.slo_min_turns = static_cast<int>(o.integer("slo_min_turns", d.slo_min_turns, 1, 1000000));
    c.stop_on_steady = o.boolean("stop_on_steady", d.stop_on_steady);
    c.steady_window_s = o.positive("steady_window_s", d.steady_window_s);
    c.steady_lag_s = o.positive("steady_lag_s", d.steady_lag_s);
    c.steady_tolerance = o.non_negative("steady_tolerance", d.steady_tolerance);
    c.check_interval_s = o.positive("check_interval_s", d.check_interval_s);
  });
}

void read_control(JsonReader& r, ControlConfig& c) {
  r.object("autoscale", [&](JsonReader& a) {
    const AutoscaleConfig d;
    AutoscaleConfig& x = c.autoscale;
    x.policy = a.one_of("policy", d.policy, {"off", "slo"});
    x.interval_s = a.positive("interval_s", d.interval_s);
    x.min_interval_s = a.non_negative("min_interval_s", d.min_interval_s);
    x.relax = a.number("relax", d.relax, 0, 1, false);
    x.guard = a.boolean("guard", d.guard);
  });
}

void read_slo(JsonReader& r, SloConfig& s) {
  const SloConfig def;
  s.ttft_s = r.positive("ttft_s", def.ttft_s);
  s.tpot_s = r.positive("tpot_s", def.tpot_s);
  s.statistic = r.one_of("statistic", def.statistic, {"mean", "p50", "p90", "p99"});
  const nlohmann::json* w = r.raw("warmup_s");
  if (w == nullptr || (w->is_string() && *w == "auto")) {
    s.warmup_s = SloConfig::kAutoWarmup;
  } else if (!w->is_number() || !(w->get<double>() >= 0) || w->get<double>() > kMaxNumber) {
    r.fail("warmup_s", "\"auto\" or a number >= 0 (seconds)", w);
  } else {
    s.warmup_s = w->get<double>();
  }
  s.mode = r.one_of("mode", def.mode, {"absolute", "relative"});
  const bool relative = s.mode == "relative";
  // A scale is a multiple of the turn's own unloaded latency: at or below 1 no loaded turn could meet it.
  for (auto [key, value] :
       {std::pair<const char*, double*>{"ttft_scale", &s.ttft_scale}, {"tpot_scale", &s.tpot_scale}}) {
    const nlohmann::json* v = r.raw(key);
    if (v == nullptr) {
      if (relative)
        r.fail(key,
               "a number > 1 (slo.mode = \"relative\" judges each turn against this multiple of its unloaded "
               "latency)",
               v);
    } else if (!v->is_number() || !(v->get<double>() > 1) || v->get<double>() > kMaxNumber) {
      r.fail(key, "a number > 1 (a multiple of the turn's unloaded latency)", v);
    } else {
      *value = v->get<double>();
    }
  }
  s.attainment = r.fraction("attainment", def.attainment);
}

// The scenario's choices about how the model executes, put where the cost model reads them.
void apply_execution(const PolicyConfig& p, EngineSpec& e) {
  if (p.ep_overlap != "engine")
    e.ep_overlap = p.ep_overlap == "none"    ? EpOverlap::kNone
                   : p.ep_overlap == "ideal" ? EpOverlap::kIdeal
                                             : EpOverlap::kTwoMicroBatches;
  if (!p.fixed_costs) {
    e.ep_latency = EpLatencyTable{};
    e.prefill_layer_overhead_s = 0;
    e.decode_layer_overhead_s = 0;
    e.prefill_cpu_s = 0;
    e.decode_cpu_s = 0;
  }
}

void read_policy(JsonReader& r, PolicyConfig& p) {
  const PolicyConfig def;
  p.read_path = r.one_of("read_path", def.read_path, policy::read_path_names());
  p.scheduler = r.one_of("scheduler", def.scheduler, policy::scheduler_names());
  p.layerwise = r.boolean("layerwise", def.layerwise);
  p.ep_overlap = r.one_of("ep_overlap", def.ep_overlap, {"engine", "two_micro_batches", "none", "ideal"});
  p.fixed_costs = r.boolean("fixed_costs", def.fixed_costs);
  p.batching = r.one_of("batching", def.batching, {"fifo", "quota"});
  p.compute_quota_s = r.positive("compute_quota_s", def.compute_quota_s);
  p.quota_scope = r.one_of("quota_scope", def.quota_scope, {"pass", "layer"});
  p.fetch_period_s = r.positive("fetch_period_s", def.fetch_period_s);
  p.pe_group_nodes = count(r, "pe_group_nodes", def.pe_group_nodes, 0);
  p.alpha_tokens = r.non_negative("alpha_tokens", def.alpha_tokens);
  p.beta_tokens = r.non_negative("beta_tokens", def.beta_tokens);
  p.persist_block_tokens = count(r, "persist_block_tokens", def.persist_block_tokens, 1);
  p.persist_append = r.boolean("persist_append", def.persist_append);
  p.pd_guard = r.one_of("pd_guard", def.pd_guard, {"off", "on"});
}

void read_storage(JsonReader& r, StorageConfig& s, const WorkloadConfig& w) {
  const StorageConfig def;
  s.capacity_bytes = r.non_negative("capacity_bytes", def.capacity_bytes);
  s.eviction = r.one_of("eviction", def.eviction, policy::eviction_names());
  // A request trace's hits are the trace's own (shared prefixes across sessions): the tier keeps prefixes
  // per agent, which only trajectories have.
  if (r.ok() && s.capacity_bytes > 0 && w.trace_format != "native")
    r.fail("capacity_bytes",
           "0 (unlimited) with a request trace (trace_format mooncake, azure or alibaba): the storage tier "
           "keeps each agent's prefix, which only trajectories (native traces, the generator) have",
           r.raw("capacity_bytes"));
}

void read_cache(JsonReader& r, CacheConfig& c, const ClusterConfig& cluster) {
  const CacheConfig def;
  c.dram_bytes = r.non_negative("dram_bytes", def.dram_bytes);
  c.eviction = r.one_of("eviction", def.eviction, policy::eviction_names());
  // The tier keeps what the DE buffer held in the DE node's DRAM; in HBM the buffer leaves nothing there,
  // and cached KV would have to be copied in first, which is not modelled.
  if (r.ok() && c.dram_bytes > 0 && cluster.de_buffer == DeBuffer::kHbm)
    r.fail("dram_bytes",
           "0 with cluster.de_buffer \"hbm\" (the DRAM tier keeps what a DE buffer in DRAM held)",
           r.raw("dram_bytes"));
}

void read_sim(JsonReader& r, SimConfig& s) {
  const SimConfig def;
  s.layer_group = count(r, "layer_group", def.layer_group, 0);
  s.read_depth = count(r, "read_depth", def.read_depth, 1);
  s.persist_interval_s = r.non_negative("persist_interval_s", def.persist_interval_s);
  s.time_limit_s = r.non_negative("time_limit_s", def.time_limit_s);
  s.progress = r.boolean("progress", def.progress);
  s.pace_band = r.number("pace_band", def.pace_band, 0, 1);
}

void read_network(JsonReader& r, NetworkConfig& n) {
  const NetworkConfig def;
  n.qos = r.one_of("qos", def.qos, {"none", "priority"});
}

void read_outputs(JsonReader& r, OutputConfig& o) {
  const OutputConfig def;
  o.results = r.string("results", def.results);
  o.timeseries_interval_s = r.non_negative("timeseries_interval_s", def.timeseries_interval_s);
  o.window_s = r.positive("window_s", def.window_s);
  o.timeline = r.string("timeline", def.timeline);
  o.requests = r.string("requests", def.requests);
  if (r.ok() && !o.requests.empty())
    if (auto f = metrics::RequestLog::format_of(o.requests); !f)
      r.fail("requests", "a file name ending in .csv or .jsonl", r.raw("requests"));
  o.timeline_start_s = r.non_negative("timeline_start_s", def.timeline_start_s);
  o.timeline_end_s = r.positive("timeline_end_s", def.timeline_end_s);
  if (r.ok() && o.timeline_end_s <= o.timeline_start_s)
    r.fail("timeline_end_s", fmt::format("a number > outputs.timeline_start_s ({})", o.timeline_start_s),
           r.raw("timeline_end_s"));
  o.timeline_max_events = r.integer("timeline_max_events", def.timeline_max_events, 1, kMaxTimelineEvents);
  o.timeline_request_sample = count(r, "timeline_request_sample", def.timeline_request_sample, 0);
}

// A list of "key.path=value" overrides at `key` of `r` (a string or an array of strings).
void read_assignments(JsonReader& r, const char* key) {
  const nlohmann::json* v = r.raw(key);
  if (v == nullptr) return;
  const char* expected = "an array of \"key.path=value\" strings";
  if (!v->is_array()) return r.fail(key, expected, v);
  for (const auto& a : *v)
    if (!a.is_string() || a.get<std::string>().find('=') == std::string::npos)
      return r.fail(key, expected, &a);
}

// One band of "expect": {"key", "min"?, "max"?, "note"?} and at most one of "sets", "ratio", "sweep".
void read_band(JsonReader& b) {
  const std::string key = b.string("key", std::nullopt);
  if (b.ok() && key.empty()) b.fail("key", "a dotted result key such as summary.jct_s", b.raw("key"));
  b.string("note", "");
  const nlohmann::json* lo = b.raw("min");
  const nlohmann::json* hi = b.raw("max");
  for (const auto& [k, v] : {std::pair<const char*, const nlohmann::json*>{"min", lo}, {"max", hi}})
    if (v != nullptr && !(v->is_number() && std::isfinite(v->get<double>()))) b.fail(k, "a finite number", v);
  if (lo == nullptr && hi == nullptr)
    b.fail("max", "a number (a band needs \"min\", \"max\" or both)", nullptr);
  if (lo != nullptr && hi != nullptr && b.ok() && lo->get<double>() > hi->get<double>())
    b.fail("max", fmt::format("a number >= min ({})", lo->dump()), hi);
  int variants = 0;
  if (b.raw("sets") != nullptr) ++variants;
  read_assignments(b, "sets");
  if (const nlohmann::json* ratio = b.raw("ratio")) {
    ++variants;
    const char* expected = "[A, B]: two arrays of \"key.path=value\" strings (measured = key(A) / key(B))";
    if (!ratio->is_array() || ratio->size() != 2) return b.fail("ratio", expected, ratio);
    for (const auto& side : *ratio) {
      if (!side.is_array()) return b.fail("ratio", expected, ratio);
      for (const auto& a : side)
        if (!a.is_string() || a.get<std::string>().find('=') == std::string::npos)
          return b.fail("ratio", expected, ratio);
    }
  }
  if (b.raw("sweep") != nullptr) {
    ++variants;
    b.object("sweep", [](JsonReader& w) {
      const int grids =
          !w.string("pd", "").empty() + !w.string("ratios", "").empty() + !w.string("p", "").empty();
      w.integer("nodes", 0, 0);
      w.integer("d", 0, 0);
      w.number("threshold", 0.9, 0, 1, false);
      read_assignments(w, "sets");
      if (w.ok() && grids != 1)
        w.fail_message(fmt::format("{}: {}: expected exactly one of \"pd\", \"ratios\" or \"p\"", w.file(),
                                   w.path_of("pd")));
    });
  }
  if (variants > 1)
    b.fail("ratio", "at most one of \"sets\", \"ratio\" and \"sweep\" per band", b.raw("ratio"));
}

void read_expect(JsonReader& r, nlohmann::json& expect) {
  const nlohmann::json* e = r.raw("expect");
  if (e == nullptr) return;
  if (!e->is_array() || e->empty()) return r.fail("expect", "a non-empty array of bands", e);
  for (size_t i = 0; i < e->size(); ++i) {
    const std::string path = fmt::format("expect[{}]", i);
    if (!(*e)[i].is_object()) return r.fail("expect", fmt::format("{} to be an object", path), &(*e)[i]);
    JsonReader b((*e)[i], r.file(), path);
    read_band(b);
    const Status s = b.finish();
    if (!s) return r.fail_message(s.message());
  }
  expect = *e;
}

// The directions a link_degrade may name per resource (none named: all of them).
std::vector<std::string> directions_of(const std::string& resource) {
  if (resource == "snic") return {"in", "out"};
  if (resource == "dram") return {"shared"};
  return {"read", "write"};  // cnic, storage
}

void read_nodes(JsonReader& r, EventConfig& e) {
  const nlohmann::json* v = r.raw("nodes");
  if (v == nullptr || !v->is_array() || v->empty())
    return r.fail("nodes", "a non-empty array of node indices", v);
  for (const auto& n : *v) {
    if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() >= kMaxNodesPerRole)
      return r.fail("nodes", fmt::format("integers in [0, {})", kMaxNodesPerRole), &n);
    const int node = n.get<int>();
    if (std::find(e.nodes.begin(), e.nodes.end(), node) != e.nodes.end())
      return r.fail("nodes", "distinct node indices", v);
    e.nodes.push_back(node);
  }
}

void read_event(JsonReader& r, EventConfig& e) {
  const EventConfig def;
  e.kind = r.one_of("kind", std::nullopt, {"link_degrade", "role_change", "node_down", "node_up"});
  e.at_s = r.non_negative("at_s", std::nullopt);
  if (r.ok() && (e.kind == "node_down" || e.kind == "node_up")) return read_nodes(r, e);
  if (r.ok() && e.kind == "role_change") {
    read_nodes(r, e);
    if (r.ok()) e.to = r.one_of("to", std::nullopt, {"prefill", "decode"});
    return;
  }
  e.until_s = r.positive("until_s", std::nullopt);
  if (r.ok() && e.until_s <= e.at_s)
    r.fail("until_s", fmt::format("a number > at_s ({:g})", e.at_s), r.raw("until_s"));
  e.node = static_cast<int>(r.integer("node", std::nullopt, 0, kMaxNodesPerRole));
  e.resource = r.one_of("resource", std::nullopt, {"snic", "cnic", "dram", "storage"});
  if (r.ok() && r.raw("direction") != nullptr)
    e.direction = r.one_of("direction", std::nullopt, directions_of(e.resource));
  e.gpu = static_cast<int>(r.integer("gpu", def.gpu, -1, 1023));
  if (r.ok() && e.gpu >= 0 && e.resource != "cnic")
    r.fail("gpu", "-1 (a GPU is named for a cnic only)", r.raw("gpu"));
  // A link at a thousandth of its bandwidth still moves a turn's KV within minutes (50 MB/s of a 50 GB/s
  // SNIC: a 64K-token DS 660B context in about a minute); below, a transfer in flight outlasts any run, which
  // cannot end before its transfers do. A link that is down is a node_down event.
  const nlohmann::json* f = r.raw("factor");
  if (r.ok() && f != nullptr && f->is_number() && f->get<double>() < kMinDegradeFactor)
    return r.fail("factor", "a number in [0.001, 1] (a link that is down is a node_down event)", f);
  e.factor = r.number("factor", std::nullopt, kMinDegradeFactor, 1);
}

// Whether two link_degrade events may act on one link direction at once (their windows overlap).
bool same_link_overlap(const EventConfig& a, const EventConfig& b) {
  if (a.kind != "link_degrade" || b.kind != "link_degrade") return false;
  const bool link = a.node == b.node && a.resource == b.resource &&
                    (a.direction.empty() || b.direction.empty() || a.direction == b.direction) &&
                    (a.gpu < 0 || b.gpu < 0 || a.gpu == b.gpu);
  return link && a.at_s < b.until_s && b.at_s < a.until_s;
}

void read_events(JsonReader& r, std::vector<EventConfig>& events) {
  const nlohmann::json* v = r.raw("events");
  if (v == nullptr) return;
  if (!v->is_array()) return r.fail("events", "an array of event objects", v);
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string path = fmt::format("events[{}]", i);
    if (!(*v)[i].is_object()) return r.fail("events", fmt::format("{} to be an object", path), &(*v)[i]);
    JsonReader e((*v)[i], r.file(), path);
    EventConfig ev;
    read_event(e, ev);
    const Status s = e.finish();
    if (!s) return r.fail_message(s.message());
    // Overlapping degradations of one link: which factor holds would depend on their order, so a
    // scenario must say it with one event per stretch of time.
    for (size_t k = 0; k < events.size(); ++k)
      if (same_link_overlap(events[k], ev))
        return r.fail_message(fmt::format(
            "{}: {}: expected no overlap with events[{}] on the same link ({} {}{} of node {}): "
            "[{:g}, {:g}) s and [{:g}, {:g}) s (one event per stretch of time)",
            r.file(), path, k, ev.resource, ev.direction.empty() ? "every direction" : ev.direction,
            ev.gpu >= 0 ? fmt::format(" of GPU {}", ev.gpu) : "", ev.node, events[k].at_s, events[k].until_s,
            ev.at_s, ev.until_s));
    events.push_back(ev);
  }
}

// The indices of the events of the given kinds, in time order (ties: the file's order).
std::vector<size_t> events_in_time_order(const ScenarioConfig& sc, std::initializer_list<const char*> kinds) {
  std::vector<size_t> order;
  for (size_t i = 0; i < sc.events.size(); ++i)
    for (const char* k : kinds)
      if (sc.events[i].kind == k) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sc.events[a].at_s < sc.events[b].at_s; });
  return order;
}

// events[i] names node n: it must be a node of the cluster.
Status check_node_index(const ScenarioConfig& sc, size_t i, int n) {
  const int total = sc.cluster.prefill_nodes + sc.cluster.decode_nodes;
  if (n < total) return Status::ok();
  return Status::error(
      fmt::format("{}: events[{}].nodes: expected node indices in [0, {}] (the cluster's {} nodes, prefill "
                  "first), got {}",
                  sc.file, i, total - 1, total, n));
}

// role_change events, in time order (ties: the file's order): each node must serve the role it leaves
// (after the earlier changes), and every change must leave both roles at least one node.
Status check_role_changes(const ScenarioConfig& sc) {
  const int total = sc.cluster.prefill_nodes + sc.cluster.decode_nodes;
  const std::vector<size_t> order = events_in_time_order(sc, {"role_change"});
  std::vector<char> prefill(total, 0);
  for (int n = 0; n < sc.cluster.prefill_nodes; ++n) prefill[n] = 1;
  int p = sc.cluster.prefill_nodes, d = sc.cluster.decode_nodes;
  for (size_t i : order) {
    const EventConfig& e = sc.events[i];
    const bool to_prefill = e.to == "prefill";
    for (int n : e.nodes) {
      if (Status st = check_node_index(sc, i, n); !st) return st;
      if ((prefill[n] != 0) == to_prefill)
        return Status::error(fmt::format(
            "{}: events[{}].nodes: expected nodes serving the {} role at {:g} s (after the earlier role "
            "changes), but node {} serves {} then",
            sc.file, i, to_prefill ? "decode" : "prefill", e.at_s, n, to_prefill ? "prefill" : "decode"));
      prefill[n] = to_prefill ? 1 : 0;
      p += to_prefill ? 1 : -1;
      d += to_prefill ? -1 : 1;
    }
    if (p < 1 || d < 1)
      return Status::error(fmt::format(
          "{}: events[{}]: expected at least one prefill and one decode node after the change, but it "
          "leaves {}P{}D",
          sc.file, i, p, d));
  }
  if (sc.control.autoscale.policy != "off" && sc.cluster.de_buffer == DeBuffer::kHbm)
    return Status::error(fmt::format(
        "{}: control.autoscale.policy: \"off\" with cluster.de_buffer \"hbm\" (a DE buffer in HBM is not "
        "modelled across a role change), got \"{}\"",
        sc.file, sc.control.autoscale.policy));
  if (sc.workload.aps_change_at_s >= 0 && sc.workload.mode != "online")
    return Status::error(fmt::format(
        "{}: workload.aps_change: expected null in an offline run (arrivals are online only)", sc.file));
  if (!order.empty() && sc.cluster.de_buffer == DeBuffer::kHbm)
    return Status::error(fmt::format(
        "{}: events[{}]: a role_change needs cluster.de_buffer \"dram\" (a DE buffer in HBM is not "
        "modelled across a role change)",
        sc.file, order.front()));
  return Status::ok();
}

// An online run's arrival rates and the time they change: the first arrival is expected within the run's
// horizon (sim.time_limit_s, else kMaxIdleS), and workload.aps_change comes before the time limit, as events
// do.
Status check_arrival_rates(const ScenarioConfig& sc) {
  const WorkloadConfig& w = sc.workload;
  if (w.mode != "online") return Status::ok();
  const bool limited = sc.sim.time_limit_s > 0;
  const double horizon = limited ? std::min(sc.sim.time_limit_s, kMaxIdleS) : kMaxIdleS;
  const std::string within = limited ? fmt::format("sim.time_limit_s = {:g} s", sc.sim.time_limit_s)
                                     : fmt::format("{:g} s", kMaxIdleS);
  const auto too_slow = [&](const char* key, double aps) {
    return Status::error(
        fmt::format("{}: {}: expected a rate >= {:g} agents/s (one arrival expected within {}: a lower rate "
                    "leaves the run "
                    "with nothing to do), got {:g}",
                    sc.file, key, 1 / horizon, within, aps));
  };
  if (w.aps < 1 / horizon) return too_slow("workload.aps", w.aps);
  if (w.aps_change_at_s >= 0) {
    if (limited && w.aps_change_at_s >= sc.sim.time_limit_s)
      return Status::error(fmt::format(
          "{}: workload.aps_change.at_s: expected a time before sim.time_limit_s ({:g}), got {:g}", sc.file,
          sc.sim.time_limit_s, w.aps_change_at_s));
    if (w.aps_after < 1 / horizon) return too_slow("workload.aps_change.aps", w.aps_after);
  }
  return Status::ok();
}

// node_down and node_up events, in time order (ties: the file's order): a node goes down while up and
// comes up while down, and every failure leaves each role at least one node up. Node failures are not
// modelled together with role changes, an autoscaler, a DE buffer in HBM or a DRAM tier.
Status check_node_events(const ScenarioConfig& sc) {
  const int total = sc.cluster.prefill_nodes + sc.cluster.decode_nodes;
  const std::vector<size_t> order = events_in_time_order(sc, {"node_down", "node_up"});
  if (order.empty()) return Status::ok();
  const size_t first = order.front();
  auto refuse = [&](const char* what) {
    return Status::error(
        fmt::format("{}: events[{}]: node_down and node_up are not modelled with {}", sc.file, first, what));
  };
  for (const auto& e : sc.events)
    if (e.kind == "role_change") return refuse("role_change events (use one or the other)");
  if (sc.control.autoscale.policy != "off") return refuse("control.autoscale (set its policy to \"off\")");
  if (sc.cluster.de_buffer == DeBuffer::kHbm) return refuse("cluster.de_buffer \"hbm\" (use \"dram\")");
  if (sc.cache.dram_bytes > 0) return refuse("a DRAM tier (cache.dram_bytes > 0)");
  std::vector<char> down(total, 0);
  int p = sc.cluster.prefill_nodes, d = sc.cluster.decode_nodes;
  for (size_t i : order) {
    const EventConfig& e = sc.events[i];
    const bool going_down = e.kind == "node_down";
    for (int n : e.nodes) {
      if (Status st = check_node_index(sc, i, n); !st) return st;
      if ((down[n] != 0) == going_down)
        return Status::error(fmt::format(
            "{}: events[{}].nodes: expected nodes that are {} at {:g} s (after the earlier node events), "
            "but node {} is {} then",
            sc.file, i, going_down ? "up" : "down", e.at_s, n, going_down ? "down" : "up"));
      down[n] = going_down ? 1 : 0;
      (n < sc.cluster.prefill_nodes ? p : d) += going_down ? -1 : 1;
    }
    if (p < 1 || d < 1)
      return Status::error(fmt::format(
          "{}: events[{}]: expected at least one prefill and one decode node up after it, but it leaves "
          "{}P{}D up",
          sc.file, i, p, d));
  }
  return Status::ok();
}

// The dotted path of the first null in `j` ("" when none).
std::string null_path(const nlohmann::json& j, const std::string& prefix = "") {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string p = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_null()) return p;
    if (it.value().is_object())
      if (std::string inner = null_path(it.value(), p); !inner.empty()) return inner;
  }
  return "";
}

// Reads every scenario field strictly; file references are only recorded here.
Status read_scenario(const nlohmann::json& doc, ScenarioConfig& sc, References& refs) {
  if (doc.is_object() && doc.contains("points") && doc.contains("parameters") && !doc.contains("model"))
    return Status::error(fmt::format(
        "{}: expected a scenario, got a calibration spec (\"points\", \"parameters\"): run it with "
        "`dpsim calibrate {}`",
        sc.file, sc.file));
  JsonReader r(doc, sc.file, "");
  sc.name = r.string("name", fs::path(sc.file).stem().string());
  sc.description = r.string("description", "");
  refs.hardware = r.string("hardware", std::nullopt);
  if (r.ok() && refs.hardware.empty())
    r.fail("hardware", "a hardware file path or name (e.g. hopper-8x400g)", r.raw("hardware"));
  refs.hardware_prefill = r.string("hardware_prefill", "");
  refs.hardware_decode = r.string("hardware_decode", "");
  refs.model = r.string("model", std::nullopt);
  refs.engine = r.string("engine", kDefaultEngine);
  if (r.ok() && refs.engine.empty())
    r.fail("engine", "an engine file path or name (e.g. dualpath-paper)", r.raw("engine"));
  if (const nlohmann::json* o = r.raw("engine_overrides")) {
    if (!o->is_object())
      r.fail("engine_overrides", "an object of engine file keys (merged into the engine file)", o);
    else if (const std::string null_at = null_path(*o); !null_at.empty())
      r.fail_message(fmt::format(
          "{}: engine_overrides.{}: expected a value or an object of engine file keys, got null (an override "
          "replaces a value of the engine file and cannot remove one: set the value wanted, e.g. "
          "engine_overrides.decode.mtp.draft_tokens=0 for no MTP)",
          r.file(), null_at));
    else
      refs.engine_overrides = *o;
  }
  if (r.ok() && refs.model.empty()) r.fail("model", "a model file path or name", r.raw("model"));
  r.object("cluster", [&](JsonReader& c) { read_cluster(c, sc.cluster); });
  r.object("workload", [&](JsonReader& w) { read_workload(w, sc.workload, refs.trace); });
  r.object("slo", [&](JsonReader& s) { read_slo(s, sc.slo); });
  r.object("policy", [&](JsonReader& p) { read_policy(p, sc.policy); });
  r.object("control", [&](JsonReader& c) { read_control(c, sc.control); });
  r.object("storage", [&](JsonReader& s) { read_storage(s, sc.storage, sc.workload); });
  r.object("cache", [&](JsonReader& c) { read_cache(c, sc.cache, sc.cluster); });
  r.object("sim", [&](JsonReader& s) { read_sim(s, sc.sim); });
  r.object("network", [&](JsonReader& n) { read_network(n, sc.network); });
  r.object("outputs", [&](JsonReader& o) { read_outputs(o, sc.outputs); });
  sc.seed = static_cast<uint64_t>(r.integer("seed", static_cast<int64_t>(ScenarioConfig().seed), 0));
  read_events(r, sc.events);
  read_expect(r, sc.expect);
  return r.finish();
}

// Resolves a file reference: a bare name (no '/', no ".json") means models/<kind>/<name>.json; anything
// else is a path, relative to the scenario's directory, then to the project root.
StatusOr<std::string> resolve_reference(const std::string& scenario_file, const char* field,
                                        const std::string& value, const char* kind) {
  const std::string wanted = model_file_reference(value, kind);
  std::string dir = fs::path(scenario_file).parent_path().string();
  std::string path = resolve_path(wanted, dir);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    // A name that is not there: the names that are (a bare name means models/<kind>/<name>.json).
    const std::string names = kind != nullptr ? shipped_names(kind) : "";
    return Status::error(
        fmt::format("{}: {}: cannot open {}: no such file{}", scenario_file, field, wanted,
                    names.empty() ? std::string()
                                  : fmt::format(" (the {} files of models/{}/, by name: {})",
                                                std::string(kind) == "llm" ? "model" : kind, kind, names)));
  }
  if (fs::is_directory(path, ec))
    return Status::error(
        fmt::format("{}: {}: {} is a directory, expected a file", scenario_file, field, path));
  return path;
}

// The hardware of each role: `hardware_prefill` / `hardware_decode` when given, else `hardware`. A file is
// loaded once; two references to one file (by any path) are not mixed hardware.
Status load_role_hardware(const std::string& path, const References& refs, ScenarioConfig& sc) {
  StatusOr<std::string> hw_file = resolve_reference(path, "hardware", refs.hardware, "hardware");
  if (!hw_file) return hw_file.status();
  sc.hardware_file = *hw_file;
  sc.prefill_hardware_file = sc.decode_hardware_file = sc.hardware_file;
  const std::pair<const char*, const std::string*> roles[] = {{"hardware_prefill", &refs.hardware_prefill},
                                                              {"hardware_decode", &refs.hardware_decode}};
  for (const auto& [field, ref] : roles) {
    if (ref->empty()) continue;
    StatusOr<std::string> f = resolve_reference(path, field, *ref, "hardware");
    if (!f) return f.status();
    (ref == &refs.hardware_prefill ? sc.prefill_hardware_file : sc.decode_hardware_file) = *f;
  }
  sc.mixed_hardware = !same_file(sc.prefill_hardware_file, sc.decode_hardware_file);
  auto load_one = [&](const std::string& file, const char* field, HardwareSpec& out) -> Status {
    StatusOr<HardwareSpec> hw = load_hardware(file);
    if (!hw) return Status::error(fmt::format("{}: {}: {}", path, field, hw.status().message()));
    out = std::move(*hw);
    return Status::ok();
  };
  SIM_RETURN_IF_ERROR(load_one(sc.prefill_hardware_file,
                               refs.hardware_prefill.empty() ? "hardware" : "hardware_prefill",
                               sc.prefill_hardware));
  if (!sc.mixed_hardware) {
    sc.decode_hardware = sc.prefill_hardware;
    return Status::ok();
  }
  return load_one(sc.decode_hardware_file, refs.hardware_decode.empty() ? "hardware" : "hardware_decode",
                  sc.decode_hardware);
}

// Whether `overrides` set the engine file's value at the dotted `path`, or an object holding it, or values
// inside it.
bool overrides_touch(const nlohmann::json& overrides, const std::string& path) {
  const nlohmann::json* at = &overrides;
  for (size_t begin = 0; begin <= path.size();) {
    if (!at->is_object()) return true;  // set whole, here or above
    const size_t end = std::min(path.find('.', begin), path.size());
    const auto it = at->find(path.substr(begin, end - begin));
    if (it == at->end()) return false;
    at = &*it;
    begin = end + 1;
  }
  return true;
}

// JSON merge of `patch` into `target`: objects key by key, anything else replaced.
void merge_into(nlohmann::json& target, const nlohmann::json& patch) {
  if (!patch.is_object() || !target.is_object()) {
    target = patch;
    return;
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) merge_into(target[it.key()], it.value());
}

// The engine: its file with the scenario's engine_overrides merged in, then the policy's execution choices.
Status load_engine_file(const std::string& path, const References& refs, ScenarioConfig& sc) {
  StatusOr<std::string> f = resolve_reference(path, "engine", refs.engine, "engine");
  if (!f) return f.status();
  sc.engine_file = *f;
  StatusOr<nlohmann::json> doc = read_json_file(sc.engine_file);
  if (!doc) return Status::error(fmt::format("{}: engine: {}", path, doc.status().message()));
  if (!refs.engine_overrides.is_null()) merge_into(*doc, refs.engine_overrides);
  StatusOr<EngineSpec> e = engine_from_json(*doc, sc.engine_file);
  if (!e) {
    // A value the scenario's engine_overrides set is the scenario's error (and a --set's, when one set it:
    // attribute_to_override); any other is the engine file's.
    const std::string& m = e.status().message();
    const std::string field = error_path(m, sc.engine_file);
    if (!field.empty() && !refs.engine_overrides.is_null() && overrides_touch(refs.engine_overrides, field))
      return Status::error(fmt::format("{}: engine_overrides.{} (merged into {})", path,
                                       m.substr(sc.engine_file.size() + 2), sc.engine_file));
    return Status::error(fmt::format("{}: engine: {}", path, m));
  }
  sc.engine = std::move(*e);
  sc.engine.file = sc.engine_file;
  if (!doc->contains("name")) sc.engine.name = fs::path(sc.engine_file).stem().string();
  apply_execution(sc.policy, sc.engine);
  return Status::ok();
}

// With a different hardware file per role (hardware_prefill / hardware_decode), a node keeps its role: a
// node that changed role would keep its GPUs, NICs and DRAM, and serve the other role on the wrong file.
// Under network.qos = priority the class weights of both files must agree (a route crosses tags of both).
Status check_mixed_hardware(const ScenarioConfig& sc) {
  if (!sc.mixed_hardware) return Status::ok();
  const std::string files = fmt::format(
      "the prefill nodes' hardware file ({}) and the decode nodes' ({}) differ (hardware_prefill / "
      "hardware_decode), and a node that changes role keeps its hardware",
      sc.prefill_hardware_file, sc.decode_hardware_file);
  for (size_t i = 0; i < sc.events.size(); ++i)
    if (sc.events[i].kind == "role_change")
      return Status::error(fmt::format(
          "{}: events[{}]: a role_change needs one hardware file for both roles, but {}", sc.file, i, files));
  if (sc.control.autoscale.policy != "off")
    return Status::error(fmt::format("{}: control.autoscale.policy: expected \"off\", got \"{}\": {}",
                                     sc.file, sc.control.autoscale.policy, files));
  const HardwareSpec& p = sc.prefill_hardware;
  const HardwareSpec& d = sc.decode_hardware;
  if (sc.network.qos == "priority" &&
      (p.qos_weight_collective != d.qos_weight_collective || p.qos_weight_kv != d.qos_weight_kv))
    return Status::error(fmt::format(
        "{}: network.qos: \"priority\" needs the same qos.weight_collective and qos.weight_kv in both "
        "roles' hardware files, but {} has {:g}:{:g} and {} has {:g}:{:g} (or network.qos \"none\")",
        sc.file, sc.prefill_hardware_file, p.qos_weight_collective, p.qos_weight_kv, sc.decode_hardware_file,
        d.qos_weight_collective, d.qos_weight_kv));
  return Status::ok();
}

// Checks that involve the scenario and the files it references.
Status cross_check(const ScenarioConfig& sc) {
  const ModelSpec& m = sc.model;
  // Units: each splits its role, holds its weights and its DP-attention groups (config/units.h).
  SIM_RETURN_IF_ERROR(check_units(sc));
  if (sc.sim.layer_group > m.layers) {
    return Status::error(
        fmt::format("{}: sim.layer_group: expected an integer in [0, {}] (the layers of {}), got {}", sc.file,
                    m.layers, sc.model_file, sc.sim.layer_group));
  }
  if (Status s = check_role_changes(sc); !s) return s;
  if (Status s = check_mixed_hardware(sc); !s) return s;
  if (Status s = check_node_events(sc); !s) return s;
  if (Status s = check_arrival_rates(sc); !s) return s;
  for (size_t i = 0; i < sc.events.size(); ++i) {
    const EventConfig& e = sc.events[i];
    const int nodes = sc.cluster.prefill_nodes + sc.cluster.decode_nodes;
    if (sc.sim.time_limit_s > 0 && e.at_s >= sc.sim.time_limit_s)
      return Status::error(
          fmt::format("{}: events[{}].at_s: expected a time before sim.time_limit_s ({:g}), "
                      "got {:g}",
                      sc.file, i, sc.sim.time_limit_s, e.at_s));
    if (e.kind != "link_degrade") continue;
    if (e.node >= nodes)
      return Status::error(
          fmt::format("{}: events[{}].node: expected an integer in [0, {}] (the cluster's {} "
                      "nodes, prefill first), got {}",
                      sc.file, i, nodes - 1, nodes, e.node));
    // The node's role's file (no node changes role with two files: check_mixed_hardware).
    const bool prefill = e.node < sc.cluster.prefill_nodes;
    const HardwareSpec& hw = prefill ? sc.prefill_hardware : sc.decode_hardware;
    if (e.gpu >= hw.gpus_per_node)
      return Status::error(
          fmt::format("{}: events[{}].gpu: expected -1 or an integer in [0, {}] (GPUs per node "
                      "of {}), got {}",
                      sc.file, i, hw.gpus_per_node - 1,
                      prefill ? sc.prefill_hardware_file : sc.decode_hardware_file, e.gpu));
  }
  // Class weights ride on the routes' latencies (platform/builder.cpp): a link latency of its own would
  // add to them and bend the weights.
  for (const auto* f : {&sc.prefill_hardware_file, &sc.decode_hardware_file}) {
    const HardwareSpec& hw = f == &sc.prefill_hardware_file ? sc.prefill_hardware : sc.decode_hardware;
    if (sc.network.qos == "priority" && hw.link_latency_s > 0) {
      return Status::error(fmt::format(
          "{}: network.qos: \"priority\" needs bandwidth-only links, but {} sets link_latency_s = {:g} "
          "(expected 0, or network.qos \"none\")",
          sc.file, *f, hw.link_latency_s));
    }
  }
  return Status::ok();
}

nlohmann::json to_json(const ScenarioConfig& sc, const References& refs) {
  const auto& w = sc.workload;
  const auto& p = sc.policy;
  nlohmann::json j;  // keys are kept sorted by nlohmann::json, so the order is stable
  j["name"] = sc.name;
  j["description"] = sc.description;
  j["hardware"] = refs.hardware;
  // Absent when not given: a scenario with one hardware file resolves as before.
  if (!refs.hardware_prefill.empty()) j["hardware_prefill"] = refs.hardware_prefill;
  if (!refs.hardware_decode.empty()) j["hardware_decode"] = refs.hardware_decode;
  j["model"] = refs.model;
  j["engine"] = refs.engine;
  // Absent when not given: a scenario without overrides resolves as before.
  if (!refs.engine_overrides.is_null()) j["engine_overrides"] = refs.engine_overrides;
  j["cluster"] = {{"prefill_nodes", sc.cluster.prefill_nodes},
                  {"decode_nodes", sc.cluster.decode_nodes},
                  {"dram_buffer_bytes", sc.cluster.dram_buffer_bytes},
                  {"prefill_dp_group_gpus", sc.cluster.prefill_dp_group_gpus},
                  {"prefill_ep_gpus", sc.cluster.prefill_ep_gpus},
                  {"decode_ep_gpus", sc.cluster.decode_ep_gpus},
                  {"de_buffer", name(sc.cluster.de_buffer)}};
  j["workload"] = {{"mode", w.mode},
                   {"trace", refs.trace},
                   {"generator",
                    {{"dataset", w.generator.dataset},
                     {"trajectories", w.generator.trajectories},
                     {"seed", w.generator.seed}}},
                   {"agents", w.agents},
                   {"max_turns", w.max_turns},
                   {"aps", w.aps},
                   {"aps_change", w.aps_change_at_s < 0
                                      ? nlohmann::json()
                                      : nlohmann::json({{"at_s", w.aps_change_at_s}, {"aps", w.aps_after}})},
                   {"append_scale", w.append_scale},
                   {"gen_scale", w.gen_scale},
                   {"trace_format", w.trace_format},
                   {"over_context", w.over_context},
                   {"online",
                    {{"stop_on_slo", w.online.stop_on_slo},
                     {"slo_window_s", w.online.slo_window_s},
                     {"slo_min_turns", w.online.slo_min_turns},
                     {"stop_on_steady", w.online.stop_on_steady},
                     {"steady_window_s", w.online.steady_window_s},
                     {"steady_lag_s", w.online.steady_lag_s},
                     {"steady_tolerance", w.online.steady_tolerance},
                     {"check_interval_s", w.online.check_interval_s}}}};
  const AutoscaleConfig& as = sc.control.autoscale;
  j["control"] = {{"autoscale",
                   {{"policy", as.policy},
                    {"interval_s", as.interval_s},
                    {"min_interval_s", as.min_interval_s},
                    {"relax", as.relax},
                    {"guard", as.guard}}}};
  j["slo"] = {{"ttft_s", sc.slo.ttft_s},
              {"tpot_s", sc.slo.tpot_s},
              {"statistic", sc.slo.statistic},
              {"warmup_s", sc.slo.warmup_s < 0 ? nlohmann::json("auto") : nlohmann::json(sc.slo.warmup_s)}};
  if (sc.slo.relative()) {  // absolute scenarios resolve as before
    j["slo"]["mode"] = sc.slo.mode;
    j["slo"]["ttft_scale"] = sc.slo.ttft_scale;
    j["slo"]["tpot_scale"] = sc.slo.tpot_scale;
    j["slo"]["attainment"] = sc.slo.attainment;
  }
  j["policy"] = {{"read_path", p.read_path},
                 {"scheduler", p.scheduler},
                 {"layerwise", p.layerwise},
                 {"ep_overlap", p.ep_overlap},
                 {"fixed_costs", p.fixed_costs},
                 {"batching", p.batching},
                 {"compute_quota_s", p.compute_quota_s},
                 {"quota_scope", p.quota_scope},
                 {"fetch_period_s", p.fetch_period_s},
                 {"pe_group_nodes", p.pe_group_nodes},
                 {"alpha_tokens", p.alpha_tokens},
                 {"beta_tokens", p.beta_tokens},
                 {"persist_block_tokens", p.persist_block_tokens},
                 {"persist_append", p.persist_append},
                 {"pd_guard", p.pd_guard}};
  j["storage"] = {{"capacity_bytes", sc.storage.capacity_bytes}, {"eviction", sc.storage.eviction}};
  j["cache"] = {{"dram_bytes", sc.cache.dram_bytes}, {"eviction", sc.cache.eviction}};
  j["sim"] = {{"layer_group", sc.sim.layer_group},
              {"read_depth", sc.sim.read_depth},
              {"persist_interval_s", sc.sim.persist_interval_s},
              {"time_limit_s", sc.sim.time_limit_s},
              {"progress", sc.sim.progress}};
  j["network"] = {{"qos", sc.network.qos}};
  j["outputs"] = {{"results", sc.outputs.results},
                  {"timeseries_interval_s", sc.outputs.timeseries_interval_s},
                  {"window_s", sc.outputs.window_s},
                  {"timeline", sc.outputs.timeline},
                  {"requests", sc.outputs.requests},
                  {"timeline_start_s", sc.outputs.timeline_start_s},
                  {"timeline_end_s", sc.outputs.timeline_end_s},
                  {"timeline_max_events", sc.outputs.timeline_max_events},
                  {"timeline_request_sample", sc.outputs.timeline_request_sample}};
  j["seed"] = sc.seed;
  if (!sc.events.empty()) {  // absent when there are none: a run without events resolves as before
    j["events"] = nlohmann::json::array();
    for (const auto& e : sc.events) {
      if (e.kind == "role_change") {
        j["events"].push_back({{"kind", e.kind}, {"at_s", e.at_s}, {"nodes", e.nodes}, {"to", e.to}});
        continue;
      }
      if (e.kind == "node_down" || e.kind == "node_up") {
        j["events"].push_back({{"kind", e.kind}, {"at_s", e.at_s}, {"nodes", e.nodes}});
        continue;
      }
      nlohmann::json ev = {{"kind", e.kind},    {"at_s", e.at_s},         {"until_s", e.until_s},
                           {"node", e.node},    {"resource", e.resource}, {"gpu", e.gpu},
                           {"factor", e.factor}};
      if (!e.direction.empty()) ev["direction"] = e.direction;  // absent: every direction (as in the file)
      j["events"].push_back(ev);
    }
  }
  return j;
}

StatusOr<ScenarioConfig> load(StatusOr<nlohmann::json> doc, const std::string& path,
                              const std::vector<std::string>& overrides) {
  if (!doc) return doc.status();
  for (const std::string& assignment : overrides) {
    Status s = apply_override(*doc, assignment);
    if (!s) return Status::error(fmt::format("{}: {}", path, s.message()));
  }

  ScenarioConfig sc;
  sc.file = path;
  References refs;
  SIM_RETURN_IF_ERROR(read_scenario(*doc, sc, refs));

  SIM_RETURN_IF_ERROR(load_role_hardware(path, refs, sc));

  SIM_RETURN_IF_ERROR(load_engine_file(path, refs, sc));

  StatusOr<std::string> model_file = resolve_reference(path, "model", refs.model, "llm");
  if (!model_file) return model_file.status();
  sc.model_file = *model_file;
  StatusOr<ModelSpec> model = load_model(sc.model_file);
  if (!model) return Status::error(fmt::format("{}: model: {}", path, model.status().message()));
  sc.model = std::move(*model);
  // An engine's MTP needs the model's draft module: without one a model decodes one token per step.
  if (sc.engine.mtp_draft_tokens > 0 && sc.model.mtp_modules == 0) {
    sc.engine.mtp_draft_tokens_not_run = sc.engine.mtp_draft_tokens;
    sc.engine.mtp_draft_tokens = 0;
  }

  if (!refs.trace.empty()) {
    StatusOr<std::string> trace = resolve_reference(path, "workload.trace", refs.trace, nullptr);
    if (!trace) return trace.status();
    sc.workload.trace = *trace;
  }
  resolve_units(sc);
  SIM_RETURN_IF_ERROR(cross_check(sc));
  sc.resolved = to_json(sc, refs);
  return sc;
}

}  // namespace

std::optional<double> mean_cost_per_node_hour(const ScenarioConfig& sc) {
  const auto& p = sc.prefill_hardware.cost_per_node_hour;
  const auto& d = sc.decode_hardware.cost_per_node_hour;
  if (!sc.mixed_hardware) return p;
  if (!p || !d) return std::nullopt;
  const double np = sc.cluster.prefill_nodes, nd = sc.cluster.decode_nodes;
  return (np * *p + nd * *d) / (np + nd);
}

StatusOr<ScenarioConfig> load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  StatusOr<ScenarioConfig> sc = load(read_json_file(path), path, overrides);
  if (!sc) return attribute_to_override(sc.status(), path, overrides);
  return sc;
}

StatusOr<ScenarioConfig> parse_scenario(const std::string& text, const std::string& name,
                                        const std::vector<std::string>& overrides) {
  StatusOr<ScenarioConfig> sc = load(parse_json_object(text, name), name, overrides);
  if (!sc) return attribute_to_override(sc.status(), name, overrides);
  return sc;
}

}  // namespace sim::config
