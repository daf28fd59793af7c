#include "sim/run/simulate.h"

#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <simgrid/s4u.hpp>

#include "sim/config/units.h"
#include "sim/control/events.h"
#include "sim/control/live_range.h"
#include "sim/control/slo_judgement.h"
#include "sim/core/paths.h"
#include "sim/core/series_bound.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/unloaded.h"
#include "sim/engine/cluster.h"
#include "sim/engine/interrupt.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/link_stats.h"
#include "sim/metrics/request_log.h"
#include "sim/metrics/resource_views.h"
#include "sim/metrics/results.h"
#include "sim/metrics/storage_summary.h"
#include "sim/metrics/timeline.h"
#include "sim/platform/builder.h"
#include "sim/policy/pd_guard.h"
#include "sim/policy/registry.h"
#include "sim/transport/transport.h"
#include "sim/workload/arrivals.h"
#include "sim/workload/assembly.h"
#include "sim/workload/closed_loop.h"

namespace sim::run {

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

// Progress reports (RunOptions::on_progress), at most every 2 s of wall time, from 3 s on.
void start_progress(const engine::Recorder& rec, int64_t total, std::chrono::steady_clock::time_point wall0,
                    const std::function<void(const Progress&)>& report) {
  engine::spawn_daemon("progress", sg4::Host::by_name("control"), [&rec, total, wall0, report]() {
    double last_print = 0;
    while (true) {
      engine::sleep_for(5.0);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      if (wall < 3 || wall - last_print < 2) continue;
      last_print = wall;
      const double done = static_cast<double>(rec.turns_completed);
      Progress p;
      p.sim_s = engine::now();
      p.turns_done = rec.turns_completed;
      p.turns_total = total;
      p.wall_s = wall;
      p.eta_s = done > 0 ? wall * (total - done) / done : 0;
      report(p);
    }
  });
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

StatusOr<Results> simulate(const config::ScenarioConfig& sc, const RunOptions& options) {
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
  auto wl = workload::build_workload(sc);
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
  argv.reserve(args.size() + 1);
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
  const auto h = platform::build_platform(
      sc.prefill_hardware, sc.decode_hardware, sc.cluster.prefill_nodes, sc.cluster.decode_nodes,
      sc.network.qos == "priority", platform::StorageClient{&sc.engine, storage_block_bytes(sc)}, to_decode);
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
    // Offline: a closed loop, each turn's think time what its arrival gap leaves after the previous turn
    // at its unloaded latency (workload/closed_loop.h).
    const bool closed_loop = sc.workload.mode == "offline";
    if (closed_loop) {
      const cost::UnloadedLatency unloaded(sc);
      workload::set_closed_loop_think(wl->replay, [&unloaded](const workload::ReplayTurn& t) {
        return unloaded.turn_s(t.hit, t.miss, t.gen);
      });
    }
    cluster.driver().set_replay(std::move(wl->replay), closed_loop);
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
  if (sc.sim.progress && options.on_progress) start_progress(rec, totals.turns, wall0, options.on_progress);
  e.run();
  const double end = engine::now();
  cluster.finish();
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
  // Every series at one interval, bounded in length (core/series_bound.h).
  const double series_interval = core::series_interval(sc.outputs.timeseries_interval_s, end);
  s["series_interval_s"] = series_interval;
  s["storage"] =
      metrics::storage_summary(sc, cluster.stored(), rec, cluster.kv_bytes_per_token(), series_interval);
  s["dram_tier"] = metrics::dram_tier_summary(sc, cluster.dram_tier(), rec, cluster.kv_bytes_per_token());
  if (cluster.roles_may_change()) s["roles"] = cluster.role_changes().roles_json(end, series_interval);
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
  // What ran: the model, the engine and the hardware by name (the files in `scenario`).
  s["setup"] = {{"model", sc.model.name}, {"engine", sc.engine.name}, {"hardware", sc.prefill_hardware.name}};
  if (sc.mixed_hardware) s["setup"]["hardware_decode"] = sc.decode_hardware.name;
  // MTP as it ran: the engine file's draft tokens run only on a model with a draft module.
  s["mtp"] = {{"draft_tokens", sc.engine.mtp_draft_tokens},
              {"acceptance", sc.engine.mtp_draft_tokens > 0 ? sc.engine.mtp_acceptance : 0.0},
              {"tokens_per_step", sc.engine.tokens_per_step()},
              {"model_modules", sc.model.mtp_modules},
              {"not_run_draft_tokens", sc.engine.mtp_draft_tokens_not_run}};
  s["time_split"] = {{"prefill", metrics::time_split_summary(
                                     rec.prefill_time, static_cast<double>(cluster.pes().size()), end, true)},
                     {"decode", metrics::time_split_summary(rec.decode_time,
                                                            static_cast<double>(cluster.des().size()), end)}};
  s["prefill_passes"] = metrics::prefill_passes_summary(rec.prefill_passes);
  control::judge_slo(sc, rec, cluster.run().stopped_by(), cluster.stop_rules().warmup_end_s(), s);

  {  // resources, resource_classes, bottleneck
    std::vector<metrics::GpuLoad> pes, des;
    for (const auto& pe : cluster.pes()) pes.push_back({pe.node, pe.gpu, pe.busy_s, -1, pe.pass_s});
    for (const auto& de : cluster.des()) des.push_back({de.node, de.gpu, de.busy_s, de.max_batch});
    std::vector<metrics::BufferLoad> buffers;
    for (size_t n = 0; n < h.nodes.size(); ++n)
      buffers.push_back({static_cast<int>(n), h.nodes[n].role, cluster.buffers().capacity(),
                         cluster.buffers().byte_s(static_cast<int>(n), end), cluster.buffers().peak(n)});
    auto views = metrics::resource_views(links, pes, des, buffers, end);
    j["resources"] = std::move(views.resources);
    j["resource_classes"] = views.classes;
    j["bottleneck"] = std::move(views.bottleneck);
  }
  config::OutputConfig series_out = sc.outputs;
  series_out.timeseries_interval_s = series_interval;
  j["balance"] = metrics::balance_summary(links, rec, series_out, rec.last_done);
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
  const double activities = static_cast<double>(transport.transfers() + transport.polls()) +
                            static_cast<double>(rec.timed_activities);
  // Wall-clock figures and simulator work counters (not part of the deterministic result).
  j["run_info"] = {{"wall_s", wall},
                   {"turns_per_wall_s", wall > 0 ? rec.turns_completed / wall : 0},
                   {"sim_s_per_wall_s", wall > 0 ? end / wall : 0},
                   {"activities", activities},
                   {"gpu_executions", rec.compute_activities},
                   {"transfers", transport.transfers()},
                   {"transfer_polls", transport.polls()},
                   {"decode_plans", rec.decode_plans},
                   {"activities_per_wall_s", wall > 0 ? activities / wall : 0},
                   {"peak_transfers_in_flight", transport.peak_in_flight()},
                   {"peak_activities_in_flight", std::max(transport.peak_activities(), rec.peak_activities)}};
  return Results{std::move(j)};
}

}  // namespace sim::run
