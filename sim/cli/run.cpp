#include "sim/cli/run.h"

#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <simgrid/s4u.hpp>

#include "sim/config/units.h"
#include "sim/control/events.h"
#include "sim/control/live_range.h"
#include "sim/core/paths.h"
#include "sim/cost/compute_model.h"
#include "sim/engine/cluster.h"
#include "sim/engine/interrupt.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/link_stats.h"
#include "sim/metrics/request_log.h"
#include "sim/metrics/results.h"
#include "sim/metrics/timeline.h"
#include "sim/platform/builder.h"
#include "sim/policy/pd_guard.h"
#include "sim/policy/registry.h"
#include "sim/transport/transport.h"
#include "sim/workload/agents.h"
#include "sim/workload/arrivals.h"
#include "sim/workload/azure.h"
#include "sim/workload/generator.h"
#include "sim/workload/mooncake.h"
#include "sim/workload/scaling.h"

namespace sim::cli {

namespace sg4 = simgrid::s4u;

namespace {

// Every SimGrid actor's stack is a memory mapping and its guard page another, and Linux caps a process's
// mappings at vm.max_map_count: beyond it SimGrid aborts while starting the actors. A run that would need
// more fails here, before any simulation, with the limit named. `actors`: what the run spawns at most.
// (With DPSIM_SG_CONTEXTS=thread, make test-sanitize's contexts, each actor is an OS thread, bounded by the
// system's thread limits: not checked.)
Status check_actor_mappings(const config::ScenarioConfig& sc, size_t actors) {
  std::ifstream limit_file("/proc/sys/vm/max_map_count");
  long long limit = 0;
  if (!(limit_file >> limit) || limit <= 0) return Status::ok();  // not Linux, or not readable: no check
  std::ifstream maps("/proc/self/maps");
  long long in_use = 0;
  for (std::string line; std::getline(maps, line);) in_use++;
  const long long need = 2 * static_cast<long long>(actors);
  if (in_use + need <= limit) return Status::ok();
  return Status::error(fmt::format(
      "{}: cluster: {}P{}D needs about {} SimGrid actors, two memory mappings each (a stack and its guard "
      "page): {} mappings with {} in use, more than vm.max_map_count = {} allows. Use fewer nodes (or a "
      "smaller sim.read_depth), or raise the limit (sysctl -w vm.max_map_count=N)",
      sc.file, sc.cluster.prefill_nodes, sc.cluster.decode_nodes, actors, need, in_use, limit));
}

// Bytes of one storage block: a Full Block of policy.persist_block_tokens tokens (storage/read_rate.h).
double storage_block_bytes(const config::ScenarioConfig& sc) {
  return sc.policy.persist_block_tokens * cost::kv_bytes_per_token(sc.model);
}

// storage: the KV tier in storage (storage.capacity_bytes; sim/storage/prefix_store.h), in bytes.
//   hit_rate            context tokens found stored / context tokens asked for, over every turn issued
//   recomputed_tokens   context tokens of completed turns that storage had given up, computed again
//   evicted_bytes       given up to fit the capacity; evictions: prefixes trimmed
//   stored_bytes_peak   the most it held (unlimited: the agents' working set); stored_bytes_end at the end
//   hit_rate_series     hit_rate of the turns issued in each series interval (null: none issued)
nlohmann::json storage_json(const config::ScenarioConfig& sc, const storage::PrefixStore& st,
                            const engine::Recorder& rec, double kv_token) {
  const auto& n = st.counters();
  nlohmann::json series = nlohmann::json::array();
  for (const auto& [asked, served] : st.series())
    series.push_back(asked > 0 ? nlohmann::json(served / asked) : nlohmann::json());
  return {{"capacity_bytes", st.limited() ? nlohmann::json(sc.storage.capacity_bytes) : nlohmann::json()},
          {"eviction", st.limited() ? nlohmann::json(sc.storage.eviction) : nlohmann::json()},
          {"hit_rate", n.asked_tokens > 0 ? n.served_tokens / n.asked_tokens : 1.0},
          {"recomputed_tokens", rec.recomputed_tokens},
          {"evicted_bytes", n.evicted_tokens * kv_token},
          {"evictions", n.evictions},
          {"stored_bytes_peak", n.peak_stored_tokens * kv_token},
          {"stored_bytes_end", n.stored_tokens * kv_token},
          {"hit_rate_series", series},
          {"series_interval_s", sc.outputs.timeseries_interval_s}};
}

// dram_tier: the KV tier in each node's DRAM (cache.dram_bytes), null without one.
//   hit_rate              hit tokens taken from a DRAM tier / hit tokens, over the turns placed (Oracle's
//                         free transport left out)
//   snic_bytes_saved      the storage reads (SNIC bytes) those tokens did not need
//   evicted_bytes         given up to fit, over every node; stored_bytes_peak: the fullest node's most
nlohmann::json dram_tier_json(const config::ScenarioConfig& sc,
                              const std::vector<storage::PrefixStore>& tiers, const engine::Recorder& rec,
                              double kv_token) {
  if (tiers.empty()) return nullptr;
  double evicted = 0, peak = 0;
  for (const auto& t : tiers) {
    evicted += t.counters().evicted_tokens * kv_token;
    peak = std::max(peak, t.counters().peak_stored_tokens * kv_token);
  }
  const double asked = rec.dram_tier_asked_tokens, served = rec.dram_tier_served_tokens;
  return {{"bytes_per_node", sc.cache.dram_bytes},
          {"eviction", sc.cache.eviction},
          {"hit_rate", asked > 0 ? served / asked : 0.0},
          {"snic_bytes_saved", served * kv_token},
          {"evicted_bytes", evicted},
          {"stored_bytes_peak", peak}};
}

// balance: DualPath §7.5's two load-balance measures, whole-run and over time.
//   snic_max_avg        max/avg traffic across the storage NICs per window, averaged over the windows
//                       with traffic; snic_max_avg_series: the same per series interval
//   attention_max_avg   max/avg attention time across the GPUs of a DP-attention group per forward pass,
//                       averaged over the passes that start in the first 5% of the run (null when every
//                       group is one GPU: cluster.prefill_dp_group_gpus = 1); _series per series interval
nlohmann::json balance_json(const metrics::LinkStats& links, const engine::Recorder& rec,
                            const config::OutputConfig& out, double jct) {
  constexpr double kFirstPart = 0.05;
  const double interval = out.timeseries_interval_s;
  return {{"window_s", out.window_s},
          {"snic_max_avg", links.snic_max_avg()},
          {"snic_max_avg_series", metrics::interval_means(links.snic_ratio_windows(), interval, jct)},
          {"attention_max_avg", metrics::mean_until(rec.attention_balance, kFirstPart * jct)},
          {"attention_max_avg_series", metrics::interval_means(rec.attention_balance, interval, jct)},
          {"series_interval_s", interval}};
}

// resources.<class>[] entries and the per-class mean utilisation ("prefill.cnic.write" -> mean).
void link_views(const metrics::LinkStats& ls, nlohmann::json& resources,
                std::map<std::string, double>& class_util, std::map<std::string, int>& class_n) {
  const auto& h = ls.handles();
  for (size_t i = 0; i < h.links.size(); ++i) {
    const auto& t = h.links[i];
    const auto& r = ls.results()[i];
    nlohmann::json e = {{"node", t.node},
                        {"role", platform::name(h.nodes[t.node].role)},
                        {"direction", t.direction},
                        {"bytes", r.bytes},
                        {"bandwidth_Bps", t.bandwidth_Bps},
                        {"utilization", r.utilization},
                        {"peak_utilization", r.peak},
                        {"busy_s", r.busy_s}};
    if (t.gpu >= 0) e["gpu"] = t.gpu;
    if (!r.series.empty()) e["series"] = r.series;
    resources[platform::name(t.resource)].push_back(e);
    const std::string key = fmt::format("{}.{}.{}", platform::name(h.nodes[t.node].role),
                                        platform::name(t.resource), t.direction);
    class_util[key] += r.utilization;
    class_n[key]++;
  }
}

// A progress line on stderr (sim time, turns, ETA), at most every 2 s of wall time, from 3 s on.
void start_progress(const engine::Recorder& rec, int64_t total, std::chrono::steady_clock::time_point wall0) {
  engine::spawn_daemon("progress", sg4::Host::by_name("control"), [&rec, total, wall0]() {
    double last_print = 0;
    while (true) {
      engine::sleep_for(5.0);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      if (wall < 3 || wall - last_print < 2) continue;
      last_print = wall;
      const double done = static_cast<double>(rec.turns_completed);
      const double eta = done > 0 ? wall * (total - done) / done : 0;
      std::fprintf(stderr, "\r  sim %.0f s  turns %lld/%lld  wall %.0f s  ETA %.0f s   ", engine::now(),
                   static_cast<long long>(rec.turns_completed), static_cast<long long>(total), wall, eta);
    }
  });
}

// The turns to simulate: agents over native trajectories, or trace-replay sessions (mooncake | azure).
struct Workload {
  std::vector<workload::Trajectory> trajectories;  // the agents point into it
  std::vector<workload::Agent> agents;
  std::vector<std::vector<control::ReplayTurn>> replay;
  workload::WorkloadTotals totals;
  int64_t dropped_turns = 0;  // over the model's context (workload.over_context = drop)
};

// Trace replay: each request's hit tokens come from the trace (capped so at least one token is
// computed), miss = input - hit, gen = output tokens; sessions and turns as the reader rebuilt them.
void replay_sessions(const workload::RequestTrace& t, Workload& w) {
  w.replay.assign(t.sessions, {});
  for (const auto& q : t.requests) {
    control::ReplayTurn r;
    r.arrival_s = q.arrival_s;
    r.hit = static_cast<double>(std::min(q.hit_tokens, q.input_tokens - 1));
    r.miss = static_cast<double>(q.input_tokens) - r.hit;
    r.gen = static_cast<double>(std::max<int64_t>(1, q.output_tokens));
    w.replay[q.session].push_back(r);
    w.totals.turns++;
    w.totals.hit_tokens += static_cast<int64_t>(r.hit);
    w.totals.miss_tokens += static_cast<int64_t>(r.miss);
    w.totals.gen_tokens += static_cast<int64_t>(r.gen);
  }
  w.replay.erase(std::remove_if(w.replay.begin(), w.replay.end(), [](const auto& s) { return s.empty(); }),
                 w.replay.end());
  w.totals.agents = static_cast<int64_t>(w.replay.size());
}

// A trace reader's error (which names the trace file and line), prefixed with the scenario and the field.
Status trace_error(const config::ScenarioConfig& sc, const Status& s) {
  return Status::error(fmt::format("{}: workload.trace: {}", sc.file, s.message()));
}

// A turn whose prompt + generated tokens exceed the model's context window is an input error.
Status context_error(const config::ScenarioConfig& sc, const std::string& where, int64_t tokens) {
  return Status::error(fmt::format(
      "{}: workload.trace: {}: {} tokens (prompt + generated) exceed the model's max_context_tokens {} ({}); "
      "workload.over_context = \"drop\" leaves such turns out",
      sc.file, where, tokens, sc.model.max_context, sc.model_file));
}

// Replay: requests whose input + output exceed the model's context are an error, or dropped
// (workload.over_context); returns how many were dropped.
StatusOr<int64_t> fit_requests(const config::ScenarioConfig& sc, workload::RequestTrace& t) {
  const int64_t max = sc.model.max_context;
  auto over = [max](const workload::TraceRequest& q) { return q.input_tokens + q.output_tokens > max; };
  if (sc.workload.over_context == "error") {
    for (const auto& q : t.requests)
      if (over(q))
        return context_error(sc, fmt::format("{}:{}", t.source, q.line), q.input_tokens + q.output_tokens);
    return int64_t{0};
  }
  const size_t before = t.requests.size();
  t.requests.erase(std::remove_if(t.requests.begin(), t.requests.end(), over), t.requests.end());
  return static_cast<int64_t>(before - t.requests.size());
}

// Agents: the context only grows, so the first turn that ends beyond the model's context is an error, or
// the agent's trajectory ends before it (workload.over_context); returns the turns dropped. An agent whose
// first turn does not fit is an error either way.
StatusOr<int64_t> fit_agents(const config::ScenarioConfig& sc, std::vector<workload::Agent>& agents) {
  const int64_t max = sc.model.max_context;
  int64_t dropped = 0;
  for (auto& a : agents) {
    int64_t context = 0;
    for (int k = 0; k < a.num_turns; ++k) {
      const workload::Turn t = a.turn(k);
      context += static_cast<int64_t>(t.append) + t.gen;
      if (context <= max) continue;
      if (sc.workload.over_context == "drop" && k > 0) {
        dropped += a.num_turns - k;
        a.num_turns = k;
        break;
      }
      const std::string source = sc.workload.trace.empty()
                                     ? fmt::format("the generated {} dataset", sc.workload.generator.dataset)
                                     : sc.workload.trace;
      const int turn = k - (a.synthetic_append > 0 ? 1 : 0);
      return context_error(sc, fmt::format("{}: trajectory \"{}\", turn {}", source, a.source->id, turn),
                           context);
    }
  }
  return dropped;
}

StatusOr<Workload> build_workload(const config::ScenarioConfig& sc) {
  Workload w;
  const auto& wc = sc.workload;
  if (wc.trace_format != "native") {
    auto t =
        wc.trace_format == "mooncake" ? workload::read_mooncake(wc.trace) : workload::read_azure(wc.trace);
    if (!t) return t.status();
    auto dropped = fit_requests(sc, *t);
    if (!dropped) return dropped.status();
    w.dropped_turns = *dropped;
    replay_sessions(*t, w);
    return w;
  }
  if (!wc.trace.empty()) {
    auto t = workload::read_trajectories(wc.trace);
    if (!t) return trace_error(sc, t.status());
    w.trajectories = std::move(*t);
  } else {
    w.trajectories =
        workload::generate_dataset(wc.generator.dataset, wc.generator.trajectories, wc.generator.seed);
  }
  if (wc.append_scale != 1.0 || wc.gen_scale != 1.0) {
    // MaxLen: the generated dataset's (Table 2), or the trace file's longest trajectory.
    const int64_t max_len = wc.trace.empty() ? workload::find_dataset(wc.generator.dataset)->max_len
                                             : workload::max_total_tokens(w.trajectories);
    w.trajectories = workload::scale_trajectories(w.trajectories, wc.append_scale, wc.gen_scale, max_len);
  }
  w.agents = workload::build_offline_agents(w.trajectories, wc.agents, wc.max_turns,
                                            workload::kDefaultSyntheticFirstRoundTokens, sc.seed);
  auto dropped = fit_agents(sc, w.agents);
  if (!dropped) return dropped.status();
  w.dropped_turns = *dropped;
  w.totals = workload::workload_totals(w.agents);
  return w;
}

// summary.slo, slo_attainment and meets_slo, over the turns judged: online, those whose first token came
// after the warm-up's end `warmup_end_s` (every turn when the run ended before the warm-up did, -1, and
// offline). slo_attainment: the fraction of them with TTFT <= slo.ttft_s and, when they generate more than
// one token, TPOT <= slo.tpot_s. meets_slo: not stopped by the TTFT rule, and the slo.statistic of their TTFT
// and of their TPOT within the bounds (false when no turn is judged). scenarios/README.md, "slo".
void slo_summary(const config::ScenarioConfig& sc, const engine::Recorder& rec, const std::string& stopped_by,
                 double warmup_end_s, nlohmann::json& s) {
  const config::SloConfig& slo = sc.slo;
  const bool online = sc.workload.mode == "online";
  const double from = online && warmup_end_s >= 0 ? warmup_end_s : -1.0;
  std::vector<double> ttft, tpot;
  int64_t ok = 0;
  for (const auto& t : rec.turns) {
    if (!(t.t_first > from)) continue;
    ttft.push_back(t.ttft);
    if (t.tpot >= 0) tpot.push_back(t.tpot);
    if (t.ttft <= slo.ttft_s && (t.tpot < 0 || t.tpot <= slo.tpot_s)) ok++;
  }
  const nlohmann::json ttft_d = metrics::distribution(ttft), tpot_d = metrics::distribution(tpot);
  const double ttft_v = ttft_d[slo.statistic].get<double>(), tpot_v = tpot_d[slo.statistic].get<double>();
  s["slo"] = {{"ttft_s", slo.ttft_s},
              {"tpot_s", slo.tpot_s},
              {"statistic", slo.statistic},
              {"warmup_s", slo.warmup_s < 0 ? nlohmann::json("auto") : nlohmann::json(slo.warmup_s)},
              {"warmup_end_s", online && warmup_end_s >= 0 ? nlohmann::json(warmup_end_s) : nlohmann::json()},
              {"turns_judged", ttft.size()},
              {"ttft_judged_s", ttft.empty() ? nlohmann::json() : nlohmann::json(ttft_v)},
              {"tpot_judged_s", tpot.empty() ? nlohmann::json() : nlohmann::json(tpot_v)}};
  s["slo_attainment"] = ttft.empty() ? 0.0 : static_cast<double>(ok) / ttft.size();
  s["meets_slo"] = !ttft.empty() && stopped_by != "ttft_slo" && ttft_v <= slo.ttft_s && tpot_v <= slo.tpot_s;
}

// outputs.timeline: the trace recorder, or null when off. timeline_request_sample 0 (auto) records every
// k-th agent with k = ceil(agents / kAutoTimelineAgents).
constexpr int kAutoTimelineAgents = 64;
std::unique_ptr<metrics::Timeline> make_timeline(const config::ScenarioConfig& sc, int agents,
                                                 const platform::PlatformHandles& h) {
  const auto& o = sc.outputs;
  if (o.timeline.empty()) return nullptr;
  metrics::TimelineOptions t;
  t.start_s = o.timeline_start_s;
  t.end_s = o.timeline_end_s;
  t.max_events = static_cast<size_t>(o.timeline_max_events);
  t.request_every = o.timeline_request_sample > 0
                        ? o.timeline_request_sample
                        : std::max(1, (agents + kAutoTimelineAgents - 1) / kAutoTimelineAgents);
  auto tl = std::make_unique<metrics::Timeline>(t);
  tl->set_layout(h.prefill_nodes, h.decode_nodes, sc.prefill_hardware.gpus_per_node,
                 sc.decode_hardware.gpus_per_node);
  tl->set_info("scenario", sc.name);
  tl->set_info("seed", static_cast<double>(sc.seed));
  return tl;
}

}  // namespace

StatusOr<nlohmann::json> run_scenario(const config::ScenarioConfig& sc) {
  const auto wall0 = std::chrono::steady_clock::now();
  if (!sc.outputs.timeline.empty()) {  // fail before the run, not after it
    const std::string err = probe_writable(sc.outputs.timeline);
    if (!err.empty()) return Status::error(fmt::format("{}: outputs.timeline: {}", sc.file, err));
  }
  // outputs.requests: opened now, so that an unwritable path fails before the run; committed after it.
  std::unique_ptr<metrics::RequestLog> request_log;
  if (!sc.outputs.requests.empty()) {
    auto log = metrics::RequestLog::open(sc.outputs.requests);
    if (!log) return Status::error(fmt::format("{}: outputs.requests: {}", sc.file, log.status().message()));
    request_log = std::move(*log);
  }
  // Workload.
  auto wl = build_workload(sc);
  if (!wl) return wl.status();
  const auto& agents = wl->agents;
  const auto totals = wl->totals;
  auto scheduler = policy::make_scheduler(sc.policy.scheduler);
  if (!scheduler) return scheduler.status();
  auto read_path = policy::make_read_path(sc.policy.read_path);
  if (!read_path) return read_path.status();

  // Simulation.
  std::vector<std::string> args = engine::engine_args();
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  sg4::Engine e(&argc, argv.data());
  xbt_log_control_set("root.thresh:critical");
  // After the engine, which installs its own SIGINT handler (it exits at once); ours stops the run cleanly.
  engine::install_stop_handlers();
  std::vector<int> to_decode;  // prefill nodes that a role change may turn into decode nodes
  if (sc.control.autoscale.policy != "off")
    for (int n = 0; n < sc.cluster.prefill_nodes; ++n) to_decode.push_back(n);
  for (const auto& ev : sc.events)
    if (ev.kind == "role_change" && ev.to == "decode")
      to_decode.insert(to_decode.end(), ev.nodes.begin(), ev.nodes.end());
  const auto h = platform::build_platform(sc.prefill_hardware, sc.decode_hardware, sc.cluster.prefill_nodes,
                                          sc.cluster.decode_nodes, sc.network.qos == "priority",
                                          storage_block_bytes(sc), to_decode);
  auto events = control::EventRunner::make(sc, h);
  if (!events) return events.status();
  // The live bottleneck-free range (control/live_range.h), recomputed by the events; with policy.pd_guard
  // = on the read-path policy is wrapped by the guard that reads it (policy/pd_guard.h).
  std::vector<platform::NodeRole> roles;
  for (const auto& n : h.nodes) roles.push_back(n.role);
  control::LiveRange live(h, roles, sc.cluster.de_buffer);
  events->watch(&live);
  std::unique_ptr<policy::ReadPathPolicy> reads = std::move(*read_path);
  const policy::PdGuard* guard = nullptr;
  if (sc.policy.pd_guard == "on") {
    auto g = std::make_unique<policy::PdGuard>(std::move(reads), &live.current(),
                                               cost::kv_bytes_per_token(sc.model));
    guard = g.get();
    reads = std::move(g);
  }
  engine::Recorder rec;
  rec.turns.reserve(static_cast<size_t>(totals.turns));
  transport::Transport transport(h);
  metrics::LinkStats links(transport, sc.outputs.window_s, sc.outputs.timeseries_interval_s);
  const auto timeline =
      make_timeline(sc, static_cast<int>(wl->replay.empty() ? agents.size() : wl->replay.size()), h);
  if (timeline) links.set_timeline(timeline.get());
  engine::Cluster cluster(sc, h, agents, std::move(*scheduler), std::move(reads), rec, transport,
                          timeline.get(), request_log.get());
  if (sc.control.autoscale.guard) cluster.watch_live(&live.current());
  // A role change moves the live range: its roles are the membership's from then on.
  // A draining node counts on neither side: it takes no new request.
  live.exclude(&cluster.draining_nodes());
  cluster.on_role_switch([&](const char* why) {
    roles = cluster.roles();
    live.update(engine::now(), why);
  });
  // A node that is down counts on neither side.
  live.exclude(&cluster.down_nodes());
  cluster.on_node_change([&](const char* why) { live.update(engine::now(), why); });
  if (!wl->replay.empty()) {
    cluster.driver().set_replay(std::move(wl->replay));
  } else if (sc.workload.mode == "online") {
    const int n = static_cast<int>(agents.size());
    cluster.driver().set_arrivals(sc.workload.aps_change_at_s < 0
                                      ? workload::poisson_arrivals(sc.workload.aps, n, sc.seed)
                                      : workload::poisson_arrivals(sc.workload.aps, n, sc.seed,
                                                                   sc.workload.aps_change_at_s,
                                                                   sc.workload.aps_after));
  }
  // The actors: the cluster's, the link sampler, the event player, the progress line and at most one
  // think-time timer per agent that thinks.
  size_t thinkers = 0;
  for (const auto& a : agents)
    for (int k = 0; k < a.num_turns; ++k)
      if (a.turn(k).think_s > 0) {
        thinkers++;
        break;
      }
  if (Status st = check_actor_mappings(sc, cluster.actors() + 3 + thinkers); !st.is_ok()) return st;
  links.start_sampler();
  events->start();
  cluster.start();
  if (sc.sim.progress) start_progress(rec, totals.turns, wall0);
  e.run();
  const double end = engine::now();
  cluster.finish();
  if (sc.sim.progress && std::chrono::steady_clock::now() - wall0 > std::chrono::seconds(3))
    std::fprintf(stderr, "\n");
  links.finish(end);

  // Results.
  nlohmann::json j;
  j["complete"] = rec.turns_completed == totals.turns;
  j["seed"] = sc.seed;
  j["scenario"] = sc.resolved;
  nlohmann::json& s = j["summary"];
  s["stopped_by"] = cluster.run().stopped_by();
  s["stopped_at_s"] = cluster.run().stopped_at_s();
  s["agents_arrived"] = cluster.driver().agents_arrived();
  s["jct_s"] = rec.last_done;
  s["sim_end_s"] = end;
  s["agents"] = totals.agents;
  s["turns_total"] = totals.turns;
  s["turns_dropped_over_context"] = wl->dropped_turns;
  s["turns_completed"] = rec.turns_completed;
  s["prompt_tokens_per_s"] = rec.last_done > 0 ? rec.prompt_tokens / rec.last_done : 0;
  s["gen_tokens_per_s"] = rec.last_done > 0 ? rec.gen_tokens / rec.last_done : 0;
  s["hit_tokens"] = static_cast<double>(totals.hit_tokens);
  s["miss_tokens"] = static_cast<double>(totals.miss_tokens);
  s["gen_tokens"] = static_cast<double>(totals.gen_tokens);
  s["storage_read_bytes"] = rec.hit_bytes_read;
  s["kv_bytes_per_token"] = cluster.kv_bytes_per_token();
  s["hit_rate"] = rec.prompt_tokens > 0 ? (rec.prompt_tokens - rec.miss_tokens) / rec.prompt_tokens : 0.0;
  s["storage"] = storage_json(sc, cluster.stored(), rec, cluster.kv_bytes_per_token());
  s["dram_tier"] = dram_tier_json(sc, cluster.dram_tier(), rec, cluster.kv_bytes_per_token());
  if (cluster.roles_may_change()) s["roles"] = cluster.role_changes().roles_json(end);
  if (cluster.autoscaler().on()) s["autoscale"] = cluster.autoscaler().to_json();
  if (cluster.nodes_may_fail()) s["failures"] = cluster.node_failures().summary_json();
  metrics::CostInputs cost;
  cost.per_node_hour = config::mean_cost_per_node_hour(sc);
  cost.nodes = sc.cluster.prefill_nodes + sc.cluster.decode_nodes;
  cost.duration_s = rec.last_done;  // as prompt_tokens_per_s and gen_tokens_per_s
  cost.tokens = rec.prompt_tokens + rec.gen_tokens;
  cost.gen_tokens = rec.gen_tokens;
  cost.turns_completed = static_cast<double>(rec.turns_completed);
  cost.turns_total = static_cast<double>(totals.turns);
  cost.agents = static_cast<double>(totals.agents);
  s["cost"] = metrics::cost_summary(cost);
  s.update(metrics::latency_summary(rec));
  metrics::DeHbmInputs hbm;
  hbm.kv_bytes_per_de = cluster.hbm().per_de();
  hbm.peak_before_join = cluster.hbm().peak_before_join();
  hbm.peak_before_join_one_de = cluster.hbm().peak_before_join_one_de();
  hbm.duration_s = rec.last_done;
  s["de_hbm"] = metrics::de_hbm_summary(rec, hbm);
  {  // the deployment units: per role, their count, size and the spread of their GPUs' utilisation
    std::vector<metrics::UnitGpu> pe_units, de_units;
    for (const auto& pe : cluster.pes()) pe_units.push_back({pe.unit, pe.busy_s});
    for (const auto& de : cluster.des()) de_units.push_back({de.group, de.busy_s});
    s["units"] = {
        {"prefill", metrics::units_summary(config::unit_gpus(sc, config::UnitRole::kPrefill), pe_units, end)},
        {"decode", metrics::units_summary(config::unit_gpus(sc, config::UnitRole::kDecode), de_units, end)}};
  }
  slo_summary(sc, rec, cluster.run().stopped_by(), cluster.stop_rules().warmup_end_s(), s);

  nlohmann::json resources = nlohmann::json::object();
  const char* kGpu = platform::name(platform::ResourceClass::kGpu);
  const std::string kPrefillGpu =
      platform::class_key(platform::NodeRole::kPrefill, platform::ResourceClass::kGpu, "compute");
  const std::string kDecodeGpu =
      platform::class_key(platform::NodeRole::kDecode, platform::ResourceClass::kGpu, "compute");
  std::map<std::string, double> cls;
  std::map<std::string, int> cls_n;
  link_views(links, resources, cls, cls_n);
  for (const auto& pe : cluster.pes()) {
    const double u = end > 0 ? pe.busy_s / end : 0;
    resources[kGpu].push_back({{"node", pe.node},
                               {"role", platform::name(platform::NodeRole::kPrefill)},
                               {"gpu", pe.gpu},
                               {"busy_s", pe.busy_s},
                               {"utilization", u}});
    cls[kPrefillGpu] += u;
    cls_n[kPrefillGpu]++;
  }
  for (const auto& de : cluster.des()) {
    const double u = end > 0 ? de.busy_s / end : 0;
    resources[kGpu].push_back({{"node", de.node},
                               {"role", platform::name(platform::NodeRole::kDecode)},
                               {"gpu", de.gpu},
                               {"busy_s", de.busy_s},
                               {"utilization", u},
                               {"max_batch", de.max_batch}});
    cls[kDecodeGpu] += u;
    cls_n[kDecodeGpu]++;
  }
  j["resources"] = resources;
  std::string best;
  double best_u = -1;
  // The bottleneck is the resource class with the highest mean utilisation. A decode GPU's busy fraction
  // (time with a non-empty batch) says nothing about saturation, so it is reported but not a candidate.
  for (auto& [k, v] : cls) {
    v /= cls_n[k];
    if (k != kDecodeGpu && v > best_u) {
      best_u = v;
      best = k;
    }
  }
  j["resource_classes"] = cls;
  j["bottleneck"] = {{"resource", best}, {"utilization", best_u}};
  j["balance"] = balance_json(links, rec, sc.outputs, rec.last_done);
  if (!events->empty())
    j["events"] = events->to_json([&](size_t i) {
      return sc.events[i].kind == "role_change" ? cluster.role_changes().to_json(i)
                                                : cluster.node_failures().to_json(i);
    });
  // pd_range: only with the guard on, with events, or when something else (a role change) recomputed it.
  if (guard != nullptr || !events->empty() || live.updates() > 1) {
    nlohmann::json pr = {{"pd_guard", sc.policy.pd_guard}, {"updates", live.to_json()}, {"guard", nullptr}};
    if (guard != nullptr) {
      const auto& c = guard->counters();
      pr["guard"] = {{"decisions", c.decisions},
                     {"steered", c.steered},
                     {"bytes_to_de_path", c.bytes_to_de_path},
                     {"bytes_to_pe_path", c.bytes_to_pe_path}};
    }
    j["pd_range"] = pr;
  }
  double buffer_peak = 0;
  for (size_t n = 0; n < h.nodes.size(); ++n) buffer_peak = std::max(buffer_peak, cluster.buffers().peak(n));
  const double hit_bytes_expected =
      (static_cast<double>(totals.hit_tokens) - rec.recomputed_tokens) * cluster.kv_bytes_per_token();
  j["invariants"] = {
      {"turns_all_completed", rec.turns_completed == totals.turns},
      {"storage_bytes_read", rec.hit_bytes_read},
      // The workload's hit tokens, less the context that storage gave up (computed, not read): what must
      // reach the PE GPUs; of it, what a DRAM tier did not hold must come from storage.
      {"hit_bytes_expected", hit_bytes_expected},
      {"storage_bytes_expected",
       hit_bytes_expected - rec.dram_tier_served_tokens * cluster.kv_bytes_per_token()},
      {"hit_bytes_loaded_to_pe", rec.hit_bytes_loaded},
      {"peak_requests_in_flight", rec.peak_in_flight},
      {"peak_transfers_in_flight", transport.peak_in_flight()},
      {"transfers", transport.transfers()},
      {"link_bytes_conservation_error", links.conservation_error()},
      {"dram_buffer_bytes", sc.cluster.dram_buffer_bytes},
      {"dram_buffer_peak_bytes", buffer_peak},
      {"dram_buffer_held_at_end_bytes", cluster.buffers().held()},
      {"de_hbm_held_at_end_bytes", cluster.hbm().held()}};
  // Node failures: what lost requests read from storage, beside what the completed turns read (every byte
  // of the SNICs' in-direction is one or the other).
  if (cluster.nodes_may_fail()) j["invariants"]["storage_bytes_lost"] = rec.lost_bytes_read;
  if (timeline) {  // outputs.timeline: the trace file, and where it went
    events->mark(*timeline, end);
    cluster.role_changes().mark(*timeline, end);
    cluster.node_failures().mark(*timeline, end);
    const std::string err = write_file_atomically(sc.outputs.timeline, timeline->to_json());
    if (!err.empty()) return Status::error(fmt::format("{}: outputs.timeline: {}", sc.file, err));
    j["timeline"] = {{"path", sc.outputs.timeline},
                     {"events", timeline->size()},
                     {"truncated", timeline->truncated()},
                     {"dropped_events", timeline->dropped()}};
  }
  if (request_log) {  // outputs.requests: the records, and where they went
    const std::string err = request_log->commit();
    if (!err.empty()) return Status::error(fmt::format("{}: outputs.requests: {}", sc.file, err));
    j["requests"] = {{"path", sc.outputs.requests}, {"records", request_log->records()}};
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double activities =
      static_cast<double>(transport.transfers()) + static_cast<double>(rec.timed_activities);
  // Wall-clock figures and simulator work counters (not part of the deterministic result).
  j["run_info"] = {{"wall_s", wall},
                   {"turns_per_wall_s", wall > 0 ? rec.turns_completed / wall : 0},
                   {"sim_s_per_wall_s", wall > 0 ? end / wall : 0},
                   {"activities", activities},
                   {"gpu_executions", rec.compute_activities},
                   {"decode_plans", rec.decode_plans},
                   {"activities_per_wall_s", wall > 0 ? activities / wall : 0},
                   {"peak_transfers_in_flight", transport.peak_in_flight()},
                   {"peak_activities_in_flight", std::max(transport.peak_activities(), rec.peak_activities)}};
  return j;
}

}  // namespace sim::cli
