// `dpsim plan SCENARIO [--min-nodes N] [--max-nodes N] [--max-splits K] [--all-splits] [--slo-ttft S]
//  [--slo-tpot S] [--jct-target S] [--objective gpus|cost] [--set-list key=v1,v2]... [--set k=v]... [--jobs
//  N]
//  [--out DIR] [--emit-jobs FILE]`: the cheapest cluster for a workload (README.md, "Capacity planning").
// The search is sim/cli/plan_search.h; this file runs its rounds as child `dpsim run`s
// (DIR/points/<name>.json and .log, reused when present, so a plan resumes), and writes DIR/plan.json.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "sim/cli/child_runs.h"
#include "sim/cli/commands.h"
#include "sim/cli/plan_search.h"
#include "sim/config/scenario.h"
#include "sim/config/units.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"

namespace sim::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxRuns = 400;  // a bound on the child runs of one plan

struct PlanArgs {
  std::string scenario, out, emit_jobs, objective = "gpus";
  int min_nodes = 2, max_nodes = 16, max_splits = 5, jobs = 0;
  bool all_splits = false;
  double slo_ttft = 0, slo_tpot = 0, jct_target = 0;
  std::vector<std::string> set_lists, sets;
};

int fail(const std::string& msg) {
  std::fprintf(stderr, "dpsim: plan: %s\n", msg.c_str());
  return 2;
}

const char* goal_name(PlanGoal g) {
  return g == PlanGoal::kSlo ? "slo" : g == PlanGoal::kJctTarget ? "jct_target" : "min_jct_x_size";
}

struct Plan {
  PlanArgs a;
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
    return fs::absolute(dir + "/points/" + name + ".json").lexically_normal().string();
  }
  std::vector<std::string> child_args(const PlanPoint& p) const {
    std::vector<std::string> args = {self_exe(), "run", scenario, "--quiet", "--out", result_path(p.name)};
    for (const auto& s : point_sets(p)) args.insert(args.end(), {"--set", s});
    args.insert(args.end(), {"--set", "sim.progress=false", "--set", kNoTimeline, "--set", kNoRequests});
    return args;
  }
  // The outcome of a point from its result file (nullopt: none, or unfinished).
  std::optional<PlanOutcome> outcome_from_file(const std::string& name) const {
    const std::string path = result_path(name);
    if (!result_file_complete(path)) return std::nullopt;
    const nlohmann::json r = read_json_file(path);
    try {
      return plan_outcome(r, space.goal, a.jct_target);
    } catch (const nlohmann::json::exception& e) {
      return PlanOutcome{false, std::numeric_limits<double>::infinity(),
                         fmt::format("unreadable result {}: {}", path, e.what())};
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

int write_plan(const Plan& plan, const PlanStep& step, double wall_s) {
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
  // Without an answer: whether the largest size tried failed for want of a resource or of latency.
  std::string diagnosis;
  if (step.recommended < 0) {
    int largest = 0;
    for (const auto& p : points)
      if (!p["result"].is_null()) largest = std::max(largest, p["nodes"].get<int>());
    bool latency_bound = largest > 0;
    for (const auto& p : points) {
      if (p["nodes"].get<int>() != largest || p["result"].is_null()) continue;
      const auto& b = p["bottleneck"];
      latency_bound = latency_bound && b.is_object() && b.value("utilization", 1.0) < kLatencyBound;
    }
    if (latency_bound)
      diagnosis = fmt::format(
          "every split of the largest size run ({} nodes) failed with no resource class above {:.0f}% "
          "utilisation: per-request latency, not capacity, misses the goal, and a larger cluster alone will "
          "not meet it (outputs.requests shows what each turn waited for)",
          largest, 100 * kLatencyBound);
  }
  const auto sc = config::load_scenario(plan.scenario, plan.sets);
  nlohmann::json j = {
      {"kind", "plan"},
      {"scenario", plan.scenario},
      {"mode", sc ? sc->workload.mode : ""},
      {"goal", goal_name(plan.space.goal)},
      {"objective", plan.a.objective},
      {"size_unit", plan.space.objective == PlanObjective::kCost ? "money per hour" : "GPUs"},
      {"sets", plan.sets},
      {"slo", sc ? nlohmann::json{{"ttft_s", sc->slo.ttft_s},
                                  {"tpot_s", sc->slo.tpot_s},
                                  {"statistic", sc->slo.statistic}}
                 : nlohmann::json()},
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
  const std::string err = write_file_atomically(plan.dir + "/plan.json", j.dump(1) + "\n");
  if (!err.empty()) return fail(err);

  std::printf("%-26s %5s %4s %-4s %9s  %s\n", "point", "GPUs", "ok", "", "metric", "why not");
  for (const auto& p : points)
    std::printf("%-26s %5d %4s %-4s %9s  %s\n", p["name"].get<std::string>().c_str(), p["gpus"].get<int>(),
                p["ok"].get<bool>() ? "yes" : "no", p["on_front"].get<bool>() ? "*" : "",
                p["metric"].is_number() ? fmt::format("{:.4g}", p["metric"].get<double>()).c_str() : "-",
                p["why"].is_string() ? p["why"].get<std::string>().c_str() : "");
  if (rec.is_null()) {
    std::printf("no cluster of %d to %d nodes meets the goal\n", plan.space.min_nodes, plan.space.max_nodes);
    if (!diagnosis.empty()) std::printf("%s\n", diagnosis.c_str());
  } else {
    std::printf("recommended: %dP%dD (%d nodes, %d GPUs%s)%s\n  %s\n", rec["p"].get<int>(),
                rec["d"].get<int>(), rec["nodes"].get<int>(), rec["gpus"].get<int>(),
                rec["cost_per_hour"].is_number()
                    ? fmt::format(", {:.4g} per hour", rec["cost_per_hour"].get<double>()).c_str()
                    : "",
                rec["sets"].empty() ? "" : (" with " + rec["sets"].dump()).c_str(),
                rec["command"].get<std::string>().c_str());
  }
  std::printf("%d runs (%d in this invocation), %.1f s; plan: %s/plan.json\n", runs, plan.runs_now, wall_s,
              plan.dir.c_str());
  return rec.is_null() ? 1 : 0;
}

int run_plan(const PlanArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  Plan plan;
  plan.a = a;
  if (a.scenario.empty()) return fail("expected a SCENARIO");
  plan.scenario = fs::absolute(resolve_path(a.scenario, "")).lexically_normal().string();
  plan.sets = a.sets;
  if (a.slo_ttft > 0) plan.sets.push_back(fmt::format("slo.ttft_s={:.17g}", a.slo_ttft));
  if (a.slo_tpot > 0) plan.sets.push_back(fmt::format("slo.tpot_s={:.17g}", a.slo_tpot));
  auto sc = config::load_scenario(plan.scenario, plan.sets);
  if (!sc) return fail(sc.status().message());
  const bool online = sc->workload.mode == "online";
  if (a.min_nodes < 2 || a.max_nodes < a.min_nodes)
    return fail(
        fmt::format("expected 2 <= --min-nodes <= --max-nodes, got {} and {}", a.min_nodes, a.max_nodes));
  if (a.max_splits < 1)
    return fail(fmt::format("--max-splits: expected an integer >= 1, got {}", a.max_splits));
  if (a.slo_ttft < 0 || a.slo_tpot < 0 || a.jct_target < 0)
    return fail("--slo-ttft, --slo-tpot and --jct-target take a number > 0");
  if (online && a.jct_target > 0)
    return fail("--jct-target is for offline scenarios; online ones plan on the SLO");
  if (!online && (a.slo_ttft > 0 || a.slo_tpot > 0))
    return fail("--slo-ttft and --slo-tpot are for online scenarios; offline ones plan on the JCT");
  if (a.objective != "gpus" && a.objective != "cost")
    return fail(fmt::format("--objective: expected gpus or cost, got \"{}\"", a.objective));
  plan.space.min_nodes = a.min_nodes;
  plan.space.max_nodes = a.max_nodes;
  plan.space.max_splits = a.max_splits;
  plan.space.prune = !a.all_splits;
  plan.space.goal = online             ? PlanGoal::kSlo
                    : a.jct_target > 0 ? PlanGoal::kJctTarget
                                       : PlanGoal::kJctTimesSize;
  plan.space.objective = a.objective == "cost" ? PlanObjective::kCost : PlanObjective::kGpus;
  auto choices = make_choices(plan);
  if (!choices) return fail(choices.status().message());
  plan.space.choices = std::move(*choices);

  plan.dir = a.out.empty() ? "out/plan-" + sc->name : a.out;
  std::error_code ec;
  fs::create_directories(plan.dir + "/points", ec);
  if (ec) return fail(fmt::format("{}: cannot create the directory: {}", plan.dir, ec.message()));
  const std::string mpath = plan.dir + "/plan-manifest.json";
  const nlohmann::json m = manifest(plan), old = read_json_file(mpath);
  if (!old.is_discarded() && old != m)
    return fail(fmt::format("{} holds a plan with other settings ({}); give another --out or remove it",
                            plan.dir, mpath));
  if (old.is_discarded()) {
    const std::string err = write_file_atomically(mpath, m.dump(1) + "\n");
    if (!err.empty()) return fail(err);
  }

  const int jobs = default_jobs(a.jobs);
  while (true) {
    PlanStep step = plan_step(plan.space, plan.known);
    if (step.needed.empty()) {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return write_plan(plan, step, wall);
    }
    // Outcomes already on disk, and points whose scenario does not load (e.g. weights that do not fit).
    std::vector<PlanPoint> todo;
    for (const auto& p : step.needed) {
      if (auto o = plan.outcome_from_file(p.name)) {
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
    }
    if (todo.empty()) continue;
    if (!a.emit_jobs.empty()) {
      std::string lines;
      for (const auto& p : todo) lines += shell_line(plan.child_args(p)) + "\n";
      const std::string err = write_file_atomically(a.emit_jobs, lines);
      if (!err.empty()) return fail(err);
      std::printf("%zu commands of the next round: %s (run them, then run this dpsim plan again)\n",
                  todo.size(), a.emit_jobs.c_str());
      return 0;
    }
    if (plan.runs_now + static_cast<int>(todo.size()) > kMaxRuns)
      return fail(
          fmt::format("gave up after {} runs; narrow --max-nodes or the --set-list choices", kMaxRuns));
    std::vector<ChildJob> jobs_list;
    ChildProgress prog;
    for (const auto& p : todo) {
      jobs_list.push_back({plan.child_args(p), plan.dir + "/points/" + p.name + ".log"});
      prog.names.push_back(p.name);
    }
    std::fprintf(stderr, "plan: round of %zu runs, %d at a time\n", todo.size(), jobs);
    const auto codes = run_children(jobs_list, jobs, print_child_progress, &prog);
    plan.runs_now += static_cast<int>(todo.size());
    for (size_t i = 0; i < todo.size(); ++i) {
      auto o = plan.outcome_from_file(todo[i].name);
      if (!o) {
        std::fprintf(stderr, "dpsim: plan: point %s failed (exit %d); its log: %s\n", todo[i].name.c_str(),
                     codes[i], jobs_list[i].log.c_str());
        return 1;
      }
      plan.known[todo[i].name] = *o;
    }
  }
}

}  // namespace

void add_plan_command(CLI::App& app, int* exit_code) {
  auto* cmd =
      app.add_subcommand("plan", "The smallest or cheapest cluster that serves a workload (SLO or JCT)");
  static PlanArgs a;
  cmd->add_option("scenario", a.scenario, "Scenario JSON (online: plan on the SLO; offline: on the JCT)");
  cmd->add_option("--min-nodes", a.min_nodes, "Smallest cluster searched, in nodes")->capture_default_str();
  cmd->add_option("--max-nodes", a.max_nodes, "Largest cluster searched, in nodes")->capture_default_str();
  cmd->add_option("--max-splits", a.max_splits, "P:D splits tried per size, spread over the analytic range")
      ->capture_default_str();
  cmd->add_flag("--all-splits", a.all_splits,
                "Try every P:D split of each size, not only the analytic range");
  cmd->add_option("--slo-ttft", a.slo_ttft, "Online: TTFT bound, s (default: the scenario's slo.ttft_s)");
  cmd->add_option("--slo-tpot", a.slo_tpot, "Online: TPOT bound, s (default: the scenario's slo.tpot_s)");
  cmd->add_option("--jct-target", a.jct_target,
                  "Offline: the smallest cluster with JCT <= this, s (default: minimise JCT x size)");
  cmd->add_option("--objective", a.objective, "Size to minimise: gpus, or cost (needs cost.per_node_hour)")
      ->capture_default_str();
  cmd->add_option("--set-list", a.set_lists, "Choices to search too: key.path=v1,v2 (repeatable)");
  cmd->add_option("--set", a.sets, "Override for every run: key.path=value (repeatable)");
  cmd->add_option("--jobs,-j", a.jobs, "Child runs at a time (default: the number of cores)");
  cmd->add_option("--out", a.out, "Output directory (default out/plan-<scenario name>)");
  cmd->add_option("--emit-jobs", a.emit_jobs,
                  "Write the next round's `dpsim run` commands to FILE and stop (rerun to go on)");
  cmd->callback([exit_code]() { *exit_code = run_plan(a); });
}

}  // namespace sim::cli
