#include "sim/study/plan.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include "sim/config/scenario.h"
#include "sim/config/units.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"
#include "sim/study/executor.h"
#include "sim/study/plan_search.h"
#include "sim/study/slo_floor.h"

namespace sim::study {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxPlanRuns = 400;  // a bound on the child runs of one plan

Status plan_error(const std::string& msg) {
  return Status::error("plan: " + msg);
}

const char* goal_name(PlanGoal g) {
  return g == PlanGoal::kSlo ? "slo" : g == PlanGoal::kJctTarget ? "jct_target" : "min_jct_x_size";
}

struct Plan {
  PlanSpec a;
  std::string scenario;           // absolute path
  std::vector<std::string> sets;  // --set, then the SLO overrides
  PlanSpace space;
  std::string dir;
  std::map<std::string, PlanOutcome> known;    // outcomes by point name (runs and invalid points)
  std::map<std::string, std::string> invalid;  // point name -> why its scenario does not load
  int runs_now = 0;                            // child runs of this invocation

  std::vector<std::string> point_sets(const PlanPoint& p) const {
    std::vector<std::string> s = sets;
    s.push_back(fmt::format("cluster.prefill_nodes={}", p.pd.p));
    s.push_back(fmt::format("cluster.decode_nodes={}", p.pd.d));
    for (const auto& [k, v] : space.choices[p.choice].sets) s.push_back(k + "=" + v);
    return s;
  }
  std::string result_path(const std::string& name) const {
    return absolute_path(dir + "/points/" + name + ".json");
  }
  ChildJob job(const PlanPoint& p) const {
    ChildJob j{p.name,
               {self_exe(), "run", scenario, "--quiet", "--out", result_path(p.name)},
               dir + "/points/" + p.name + ".log",
               result_path(p.name),
               ""};
    for (const auto& s : point_sets(p)) j.args.insert(j.args.end(), {"--set", s});
    j.args.insert(j.args.end(), {"--set", "sim.progress=false", "--set", kNoTimeline, "--set", kNoRequests});
    return j;
  }
  // The outcome of a point from its result file (nullopt: none, or unfinished).
  std::optional<PlanOutcome> outcome_from_file(const Executor& ex, const PlanPoint& p) const {
    const ChildJob j = job(p);
    if (!ex.done_before(j)) return std::nullopt;
    const nlohmann::json r = read_json_file(j.result);
    try {
      return plan_outcome(r, space.goal, a.jct_target);
    } catch (const nlohmann::json::exception& e) {
      return PlanOutcome{false, std::numeric_limits<double>::infinity(),
                         fmt::format("unreadable result {}: {}", j.result, e.what())};
    }
  }
};

// The choices: one per combination of --set-list values, with its hardware's size, price and range.
StatusOr<std::vector<PlanChoice>> make_choices(const Plan& plan) {
  std::vector<SetList> lists;
  for (const auto& s : plan.a.set_lists) {
    auto l = parse_set_list(s);
    if (!l) return l.status();
    lists.push_back(*l);
  }
  std::vector<PlanChoice> out;
  for (const auto& combo : expand_grid({GridPoint{1, 1}}, lists)) {
    PlanChoice c;
    c.sets = combo.sets;
    c.suffix = combo.name.substr(std::string("p1-d1").size());
    std::vector<std::string> sets = plan.sets;
    for (const auto& [k, v] : c.sets) sets.push_back(k + "=" + v);
    auto sc = config::load_scenario(plan.scenario, sets);
    if (!sc) return sc.status();
    c.gpus_per_node = sc->prefill_hardware.gpus_per_node;
    c.price_per_node_hour = sc->prefill_hardware.cost_per_node_hour;
    c.per_role = sc->mixed_hardware;
    c.decode_gpus_per_node = sc->decode_hardware.gpus_per_node;
    c.decode_price_per_node_hour = sc->decode_hardware.cost_per_node_hour;
    c.unit_p = config::unit_nodes(sc->cluster.prefill_ep_gpus, c.gpus_per_node);
    c.unit_d = config::unit_nodes(sc->cluster.decode_ep_gpus, c.decode_gpus_per_node);
    if (auto r = cost::bottleneck_range(
            cost::sided_inputs(sc->prefill_hardware, sc->decode_hardware, sc->cluster.de_buffer));
        r && r->feasible) {
      c.has_range = true;
      c.pd_min = r->pd_min;
      c.pd_max = r->pd_max;
    }
    if (plan.space.objective == PlanObjective::kCost && !c.price_per_hour({1, 1}))
      return Status::error(
          fmt::format("--objective cost: the hardware file {} has no cost.per_node_hour{}",
                      c.price_per_node_hour ? sc->decode_hardware_file : sc->prefill_hardware_file,
                      c.sets.empty() ? "" : " (choice" + combo.name.substr(5) + ")"));
    out.push_back(c);
  }
  return out;
}

nlohmann::json manifest(const Plan& p) {
  return {
      {"kind", "plan-manifest"},          {"scenario", p.scenario},          {"sets", p.sets},
      {"set_lists", p.a.set_lists},       {"goal", goal_name(p.space.goal)}, {"jct_target_s", p.a.jct_target},
      {"objective", p.a.objective},       {"min_nodes", p.space.min_nodes},  {"max_nodes", p.space.max_nodes},
      {"max_splits", p.space.max_splits}, {"prune", p.space.prune}};
}

// One entry of plan.json's points.
nlohmann::json point_json(const Plan& plan, const PlanPoint& p, const PlanOutcome& o) {
  const PlanChoice& c = plan.space.choices[p.choice];
  nlohmann::json j = {
      {"name", p.name},
      {"nodes", p.nodes()},
      {"p", p.pd.p},
      {"d", p.pd.d},
      {"sets", nlohmann::json::object()},
      {"gpus", c.gpus(p.pd)},
      {"cost_per_hour", c.price_per_hour(p.pd) ? nlohmann::json(*c.price_per_hour(p.pd)) : nlohmann::json()},
      {"ok", o.ok},
      {"metric", std::isfinite(o.metric) ? nlohmann::json(o.metric) : nlohmann::json()},
      {"why", o.ok ? nlohmann::json() : nlohmann::json(o.why)},
      {"result", nullptr}};
  for (const auto& [k, v] : c.sets) j["sets"][k] = v;
  if (plan.invalid.count(p.name)) return j;
  const nlohmann::json r = read_json_file(plan.result_path(p.name));
  if (r.is_discarded() || !r.contains("summary")) return j;
  const auto& s = r["summary"];
  j["result"] = "points/" + p.name + ".json";
  for (const char* k : {"jct_s", "stopped_by", "meets_slo", "prompt_tokens_per_s", "gen_tokens_per_s"})
    j[k] = s.value(k, nlohmann::json());
  if (s.contains("slo")) {
    j["ttft_judged_s"] = s["slo"].value("ttft_judged_s", nlohmann::json());
    j["tpot_judged_s"] = s["slo"].value("tpot_judged_s", nlohmann::json());
  }
  j["cost"] = s.value("cost", nlohmann::json());
  j["bottleneck"] = r.value("bottleneck", nlohmann::json());
  return j;
}

// Without an answer: why the largest size run failed, when every split of it failed for want of latency
// rather than of a resource ("" otherwise).
std::string diagnosis_of(const nlohmann::json& points) {
  int largest = 0;
  for (const auto& p : points)
    if (!p["result"].is_null()) largest = std::max(largest, p["nodes"].get<int>());
  bool latency_bound = largest > 0;
  for (const auto& p : points) {
    if (p["nodes"].get<int>() != largest || p["result"].is_null()) continue;
    const auto& b = p["bottleneck"];
    latency_bound = latency_bound && b.is_object() && b.value("utilization", 1.0) < kLatencyBound;
  }
  if (!latency_bound) return "";
  return fmt::format(
      "every split of the largest size run ({} nodes) failed with no resource class above {:.0f}% "
      "utilisation: per-request latency, not capacity, misses the goal, and a larger cluster alone will "
      "not meet it (outputs.requests shows what each turn waited for)",
      largest, 100 * kLatencyBound);
}

// plan.json's slo: the bounds; with a relative SLO its mode, scales and attainment too.
nlohmann::json slo_json(const StatusOr<config::ScenarioConfig>& sc) {
  if (!sc) return nullptr;
  nlohmann::json j = {
      {"ttft_s", sc->slo.ttft_s}, {"tpot_s", sc->slo.tpot_s}, {"statistic", sc->slo.statistic}};
  if (sc->slo.relative()) {
    j["mode"] = sc->slo.mode;
    j["ttft_scale"] = sc->slo.ttft_scale;
    j["tpot_scale"] = sc->slo.tpot_scale;
    j["attainment"] = sc->slo.attainment;
  }
  return j;
}

// plan.json of the finished search.
nlohmann::json plan_json(const Plan& plan, const PlanStep& step, double wall_s) {
  nlohmann::json points = nlohmann::json::array();
  std::vector<std::pair<double, double>> xy;
  std::vector<size_t> xy_point;
  int runs = 0;
  for (const PlanPoint& p : step.probed) {
    const PlanOutcome& o = plan.known.at(p.name);
    nlohmann::json j = point_json(plan, p, o);
    if (!j["result"].is_null()) runs++;
    j["on_front"] = false;
    // The front: GPUs (or money per hour) against the JCT (offline) or the judged TTFT (online), over the
    // points that meet the goal.
    const nlohmann::json& y = plan.space.goal == PlanGoal::kSlo ? j.value("ttft_judged_s", nlohmann::json())
                                                                : j.value("jct_s", nlohmann::json());
    if (o.ok && y.is_number()) {
      xy.emplace_back(plan_size(p, plan.space), y.get<double>());
      xy_point.push_back(points.size());
    }
    points.push_back(j);
  }
  nlohmann::json front = nlohmann::json::array();
  for (size_t i : pareto_front(xy)) {
    points[xy_point[i]]["on_front"] = true;
    front.push_back(points[xy_point[i]]["name"]);
  }
  nlohmann::json rec = nullptr;
  if (step.recommended >= 0) {
    const PlanBest& b = step.best[step.recommended];
    rec = point_json(plan, b.point, plan.known.at(b.point.name));
    std::vector<std::string> cmd = {"dpsim", "run", plan.scenario};
    for (const auto& s : plan.point_sets(b.point)) cmd.insert(cmd.end(), {"--set", s});
    rec["command"] = shell_line(cmd);
    rec["objective_value"] = b.objective;
  }
  nlohmann::json best = nlohmann::json::array();
  for (const auto& b : step.best) {
    nlohmann::json e = {{"sets", nlohmann::json::object()}, {"found", b.found}};
    for (const auto& [k, v] : plan.space.choices[b.choice].sets) e["sets"][k] = v;
    e["point"] = b.found ? nlohmann::json(b.point.name) : nlohmann::json();
    e["objective_value"] = b.found ? nlohmann::json(b.objective) : nlohmann::json();
    best.push_back(e);
  }
  nlohmann::json rejected = nlohmann::json::array();
  for (const auto& name : step.rejected_neighbours)
    rejected.push_back({{"name", name}, {"why", plan.known.at(name).why}});
  const std::string diagnosis = step.recommended < 0 ? diagnosis_of(points) : "";
  const auto sc = config::load_scenario(plan.scenario, plan.sets);
  return {{"kind", "plan"},
          {"scenario", plan.scenario},
          {"mode", sc ? sc->workload.mode : ""},
          {"goal", goal_name(plan.space.goal)},
          {"objective", plan.a.objective},
          {"size_unit", plan.space.objective == PlanObjective::kCost ? "money per hour" : "GPUs"},
          {"sets", plan.sets},
          {"slo", slo_json(sc)},
          {"jct_target_s",
           plan.space.goal == PlanGoal::kJctTarget ? nlohmann::json(plan.a.jct_target) : nlohmann::json()},
          {"space",
           {{"min_nodes", plan.space.min_nodes},
            {"max_nodes", plan.space.max_nodes},
            {"max_splits", plan.space.max_splits},
            {"prune", plan.space.prune},
            {"set_lists", plan.a.set_lists}}},
          {"recommended", rec},
          {"diagnosis", diagnosis.empty() ? nlohmann::json() : nlohmann::json(diagnosis)},
          {"best_per_choice", best},
          {"rejected_neighbours", rejected},
          {"pareto_front", front},
          {"runs", runs},
          {"runs_this_invocation", plan.runs_now},
          {"wall_s", wall_s},
          {"points", points}};
}

// The table of points and the answer.
std::string plan_text(const Plan& plan, const nlohmann::json& j) {
  // The metric column by the goal (plan_search.cpp, plan_outcome), named in its header and said below it.
  const bool slo = plan.space.goal == PlanGoal::kSlo;
  const bool relative = slo && j["slo"].is_object() && j["slo"].contains("mode");
  const char* column = !slo ? "JCT s" : relative ? "miss/allow" : "x SLO";
  const std::string legend =
      !slo ? "JCT s: the run's JCT in seconds (- when it did not complete)"
      : relative
          ? "miss/allow: the share of judged turns outside their own bounds over the share the SLO "
            "allows (<= 1 meets it)"
          : "x SLO: the larger of TTFT / its bound and TPOT / its bound, for the SLO's statistic (<= 1 "
            "meets it)";
  std::string t =
      fmt::format("{:<26} {:>5} {:>4} {:<4} {:>10}  {}\n", "point", "GPUs", "ok", "", column, "why not");
  for (const auto& p : j["points"])
    t += fmt::format("{:<26} {:5} {:>4} {:<4} {:>10}  {}\n", p["name"].get<std::string>(),
                     p["gpus"].get<int>(), p["ok"].get<bool>() ? "yes" : "no",
                     p["on_front"].get<bool>() ? "*" : "",
                     p["metric"].is_number() ? fmt::format("{:.4g}", p["metric"].get<double>()) : "-",
                     p["why"].is_string() ? p["why"].get<std::string>() : "");
  t += legend + "\n";
  const nlohmann::json& rec = j["recommended"];
  if (rec.is_null()) {
    t += fmt::format("no cluster of {} to {} nodes meets the goal\n", plan.space.min_nodes,
                     plan.space.max_nodes);
    if (j["diagnosis"].is_string()) t += j["diagnosis"].get<std::string>() + "\n";
  } else {
    t += fmt::format("recommended: {}P{}D ({} nodes, {} GPUs{}){}\n  {}\n", rec["p"].get<int>(),
                     rec["d"].get<int>(), rec["nodes"].get<int>(), rec["gpus"].get<int>(),
                     rec["cost_per_hour"].is_number()
                         ? fmt::format(", {:.4g} per hour", rec["cost_per_hour"].get<double>())
                         : "",
                     rec["sets"].empty() ? "" : " with " + rec["sets"].dump(),
                     rec["command"].get<std::string>());
  }
  return t + fmt::format("{} runs ({} in this invocation), {:.1f} s; plan: {}/plan.json\n",
                         j["runs"].get<int>(), plan.runs_now, j["wall_s"].get<double>(), plan.dir);
}

// The plan of the spec: its scenario and overrides, the space searched and its directory (created, with
// the manifest that keeps a later invocation from mixing other settings into it).
StatusOr<Plan> make_plan(const PlanSpec& a) {
  Plan plan;
  plan.a = a;
  if (a.scenario.empty()) return plan_error("expected a SCENARIO");
  plan.scenario = absolute_path(resolve_path(a.scenario, ""));
  plan.sets = a.sets;
  if (a.slo_ttft > 0) plan.sets.push_back(fmt::format("slo.ttft_s={:.17g}", a.slo_ttft));
  if (a.slo_tpot > 0) plan.sets.push_back(fmt::format("slo.tpot_s={:.17g}", a.slo_tpot));
  auto sc = config::load_scenario(plan.scenario, plan.sets);
  if (!sc) return plan_error(sc.status().message());
  const bool online = sc->workload.mode == "online";
  if (a.min_nodes < 2 || a.max_nodes < a.min_nodes)
    return plan_error(
        fmt::format("expected 2 <= --min-nodes <= --max-nodes, got {} and {}", a.min_nodes, a.max_nodes));
  if (a.max_nodes > kMaxPlanNodes)
    return plan_error(fmt::format(
        "--max-nodes: expected at most {} (the search computes every P:D split of every size, {} sizes here; "
        "a plan of more nodes is a plan of larger units), got {}",
        kMaxPlanNodes, a.max_nodes - a.min_nodes + 1, a.max_nodes));
  if (a.max_splits < 1)
    return plan_error(fmt::format("--max-splits: expected an integer >= 1, got {}", a.max_splits));
  if (a.slo_ttft < 0 || a.slo_tpot < 0 || a.jct_target < 0)
    return plan_error("--slo-ttft, --slo-tpot and --jct-target take a number > 0");
  if (online && a.jct_target > 0)
    return plan_error("--jct-target is for offline scenarios; online ones plan on the SLO");
  if (!online && (a.slo_ttft > 0 || a.slo_tpot > 0))
    return plan_error("--slo-ttft and --slo-tpot are for online scenarios; offline ones plan on the JCT");
  if (a.objective != "gpus" && a.objective != "cost")
    return plan_error(fmt::format("--objective: expected gpus or cost, got \"{}\"", a.objective));
  plan.space.min_nodes = a.min_nodes;
  plan.space.max_nodes = a.max_nodes;
  plan.space.max_splits = a.max_splits;
  plan.space.prune = !a.all_splits;
  plan.space.goal = online             ? PlanGoal::kSlo
                    : a.jct_target > 0 ? PlanGoal::kJctTarget
                                       : PlanGoal::kJctTimesSize;
  plan.space.objective = a.objective == "cost" ? PlanObjective::kCost : PlanObjective::kGpus;
  auto choices = make_choices(plan);
  if (!choices) return plan_error(choices.status().message());
  plan.space.choices = std::move(*choices);

  plan.dir = a.out.empty() ? "out/plan-" + sc->name : a.out;
  std::error_code ec;
  fs::create_directories(plan.dir + "/points", ec);
  if (ec) return plan_error(fmt::format("{}: cannot create the directory: {}", plan.dir, ec.message()));
  const std::string mpath = plan.dir + "/plan-manifest.json";
  const nlohmann::json m = manifest(plan), old = read_json_file(mpath);
  if (!old.is_discarded() && old != m)
    return plan_error(fmt::format("{} holds a plan with other settings ({}); give another --out or remove it",
                                  plan.dir, mpath));
  if (old.is_discarded()) {
    const std::string err = write_file_atomically(mpath, m.dump(1) + "\n");
    if (!err.empty()) return plan_error(err);
  }
  return plan;
}

}  // namespace

StatusOr<Outcome> run_plan(const PlanSpec& a, const Console& console) {
  const auto t0 = std::chrono::steady_clock::now();
  auto made = make_plan(a);
  if (!made) return made.status();
  Plan& plan = *made;
  // An absolute SLO that the workload's turns miss alone on an idle cluster: no size meets it, so the plan
  // says so before any run (study/slo_floor.h). Each choice of --set-list is its own workload and cost.
  if (plan.space.goal == PlanGoal::kSlo) {
    nlohmann::json floors = nlohmann::json::array();
    std::string why;
    bool all_unreachable = true;
    for (const auto& c : plan.space.choices) {
      std::vector<std::string> sets = plan.sets;
      for (const auto& [k, v] : c.sets) sets.push_back(k + "=" + v);
      auto sc = config::load_scenario(plan.scenario, sets);
      if (!sc) return plan_error(sc.status().message());
      auto f = slo_floor(*sc);
      if (!f) return plan_error(f.status().message());
      nlohmann::json e = {{"sets", nlohmann::json::object()},      {"turns", f->turns},
                          {"turns_sampled", f->turns_sampled},     {"ttft_over_share", f->ttft_over_share},
                          {"tpot_over_share", f->tpot_over_share}, {"unloaded_ttft_s", f->ttft_stat_s},
                          {"unloaded_tpot_s", f->tpot_stat_s},     {"unreachable", f->unreachable}};
      for (const auto& [k, v] : c.sets) e["sets"][k] = v;
      floors.push_back(e);
      all_unreachable = all_unreachable && f->unreachable;
      if (f->unreachable && why.empty()) why = f->why;
    }
    if (all_unreachable) {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      nlohmann::json j = plan_json(plan, PlanStep{}, wall);
      j["diagnosis"] = why;
      j["slo_floor"] = floors;
      const std::string err = write_file_atomically(plan.dir + "/plan.json", j.dump(1) + "\n");
      if (!err.empty()) return plan_error(err);
      return Outcome{
          fmt::format("no cluster size can meet the SLO; stopped before any run\n{}\n0 runs; plan: "
                      "{}/plan.json\n",
                      why, plan.dir),
          Verdict::kFail};
    }
  }
  const Executor ex(a.jobs, console);
  while (true) {
    PlanStep step = plan_step(plan.space, plan.known);
    if (step.needed.empty()) {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const nlohmann::json j = plan_json(plan, step, wall);
      const std::string err = write_file_atomically(plan.dir + "/plan.json", j.dump(1) + "\n");
      if (!err.empty()) return plan_error(err);
      return Outcome{plan_text(plan, j), j["recommended"].is_null() ? Verdict::kFail : Verdict::kPass};
    }
    // Outcomes already on disk, and points whose scenario does not load (e.g. weights that do not fit).
    std::vector<PlanPoint> todo;
    std::vector<ChildJob> jobs;
    for (const auto& p : step.needed) {
      if (auto o = plan.outcome_from_file(ex, p)) {
        plan.known[p.name] = *o;
        continue;
      }
      if (auto check = config::load_scenario(plan.scenario, plan.point_sets(p)); !check) {
        plan.invalid[p.name] = check.status().message();
        plan.known[p.name] = {false, std::numeric_limits<double>::infinity(),
                              "not runnable: " + check.status().message()};
        continue;
      }
      todo.push_back(p);
      jobs.push_back(plan.job(p));
    }
    if (todo.empty()) continue;
    if (!a.emit_jobs.empty()) {
      if (Status st = ex.emit(a.emit_jobs, jobs); !st) return plan_error(st.message());
      return Outcome{
          fmt::format("{} commands of the next round: {} (run them, then run this dpsim plan again)\n",
                      todo.size(), a.emit_jobs)};
    }
    if (plan.runs_now + static_cast<int>(todo.size()) > kMaxPlanRuns)
      return plan_error(
          fmt::format("gave up after {} runs; narrow --max-nodes or the --set-list choices", kMaxPlanRuns));
    console.err(fmt::format("plan: round of {} runs, {} at a time\n", todo.size(), ex.jobs()));
    const auto ends = ex.run(jobs);
    plan.runs_now += static_cast<int>(todo.size());
    for (size_t i = 0; i < todo.size(); ++i) {
      auto o = plan.outcome_from_file(ex, todo[i]);
      if (!o) {
        console.err("dpsim: plan: " + Executor::failure(jobs[i], ends[i].code) + "\n");
        return Outcome{"", Verdict::kFail};
      }
      plan.known[todo[i].name] = *o;
    }
  }
}

}  // namespace sim::study
