#include "sim/study/props.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "sim/config/json_util.h"
#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/study/executor.h"
#include "sim/study/props_relations.h"

namespace sim::study {

namespace fs = std::filesystem;

namespace {

Status props_error(const std::string& msg) {
  return Status::error("props: " + msg);
}

// The hardware file of `sc` with one change, written under DIR/hardware/ (once); returns its path, or ""
// with *err set.
std::string hardware_variant(const config::ScenarioConfig& sc, const std::string& dir, const std::string& tag,
                             const std::function<void(nlohmann::json&)>& change, std::string* err) {
  auto j = config::read_json_file(sc.hardware_file);
  if (!j) {
    *err = j.status().message();
    return "";
  }
  change(*j);
  const std::string stem = fs::path(sc.hardware_file).stem().string() + "." + tag;
  (*j)["name"] = stem;
  const std::string path = absolute_path(dir + "/hardware/" + stem + ".json");
  *err = write_file_atomically(path, j->dump(1) + "\n");
  return err->empty() ? path : "";
}

// The overrides that make `run` out of its scenario, or the reason it is skipped.
struct Planned {
  std::vector<std::string> sets;
  std::string skip;  // non-empty: not run, and why
};

class Planner {
 public:
  Planner(const PropsSpec& spec, const std::vector<std::string>& cli_sets, std::string dir)
      : spec_(spec), cli_sets_(cli_sets), dir_(std::move(dir)) {}

  // Loads every scenario with the grid's and the command line's overrides; a failure is bad input.
  Status load() {
    for (const auto& s : spec_.scenarios) {
      auto sc = config::load_scenario(s.file, common());
      if (!sc) return sc.status();
      base_.push_back(std::move(*sc));
    }
    return Status();
  }

  StatusOr<Planned> plan(const PropsRun& run) {
    Planned p;
    const config::ScenarioConfig& base = base_[run.scenario];
    p.sets = common();
    p.sets.push_back(fmt::format("cluster.prefill_nodes={}", run.pd.p));
    p.sets.push_back(fmt::format("cluster.decode_nodes={}", run.pd.d));
    for (const auto& pol : spec_.policies)
      if (pol.name == run.policy) p.sets.insert(p.sets.end(), pol.sets.begin(), pol.sets.end());
    // The point itself must load (a model whose weights do not fit on so few nodes does not).
    auto point = config::load_scenario(base.file, p.sets);
    if (!point) {
      p.skip = point.status().message();
      return p;
    }
    const config::HardwareSpec& hw = base.prefill_hardware;
    // A variant is a changed `hardware` file: with hardware_prefill / hardware_decode it would miss a role.
    if ((run.variant == "snic" || run.variant == "storage") &&
        (base.mixed_hardware || base.prefill_hardware_file != base.hardware_file)) {
      p.skip = "no hardware variant: the scenario has a hardware file per role (hardware_prefill/_decode)";
      return p;
    }
    std::string err;
    if (run.variant == "snic") {
      const std::string path = variant_file(
          base, fmt::format("snic-x{}", spec_.snic_factor),
          [&](nlohmann::json& j) { j["snic"]["bw_Bps"] = hw.snic_bw_Bps * spec_.snic_factor; }, &err);
      if (path.empty()) return Status::error(err);
      p.sets.push_back("hardware=" + path);
    } else if (run.variant == "storage") {
      // The storage's own cap (a hardware variant), else the engine's storage client (an override).
      if (hw.storage_bw_per_node_Bps <= 0 && base.engine.storage_efficiency >= 1) {
        p.skip = "no storage variant: storage reads already run at the SNIC line rate";
        return p;
      }
      if (hw.storage_bw_per_node_Bps > 0) {
        const std::string path = variant_file(
            base, fmt::format("storage-x{}", spec_.storage_factor),
            [&](nlohmann::json& j) {
              j["storage"]["bw_per_node_Bps"] = hw.storage_bw_per_node_Bps * spec_.storage_factor;
            },
            &err);
        if (path.empty()) return Status::error(err);
        p.sets.push_back("hardware=" + path);
      } else {
        p.sets.push_back(fmt::format("engine_overrides.storage.efficiency={:.17g}",
                                     std::min(1.0, base.engine.storage_efficiency * spec_.storage_factor)));
      }
    } else if (run.variant == "agents") {
      p.sets.push_back(fmt::format("workload.agents={}", static_cast<long>(std::lround(
                                                             point->workload.agents * spec_.agents_factor))));
    }
    return p;
  }

 private:
  std::vector<std::string> common() const {
    std::vector<std::string> s = spec_.sets;
    s.insert(s.end(), cli_sets_.begin(), cli_sets_.end());
    return s;
  }

  std::string variant_file(const config::ScenarioConfig& sc, const std::string& tag,
                           const std::function<void(nlohmann::json&)>& change, std::string* err) {
    const std::string key = sc.hardware_file + "|" + tag;
    auto it = files_.find(key);
    if (it != files_.end()) return it->second;
    std::string path = hardware_variant(sc, dir_, tag, change, err);
    if (!path.empty()) files_[key] = path;
    return path;
  }

  const PropsSpec& spec_;
  const std::vector<std::string>& cli_sets_;
  std::string dir_;
  std::vector<config::ScenarioConfig> base_;
  std::map<std::string, std::string> files_;
};

std::string fmt_ratio(const PropsCheck& c) {
  return fmt::format("{:.4g} {} {:.4g}", c.measured,
                     c.ok ? (c.at_most ? "<=" : ">=") : (c.at_most ? ">" : "<"), c.bound);
}

// The table of relations, then each explained violation and each violation with its runs.
std::string report_text(const nlohmann::json& rep, const std::vector<PropsCheck>& checks,
                        const std::map<std::string, std::string>& paths) {
  std::string t =
      fmt::format("{:<26} {:>7} {:>11} {:>10}\n", "relation", "checks", "violations", "explained");
  for (const auto& r : rep["relations"])
    t += fmt::format("{:<26} {:7} {:11} {:10}\n", r["name"].get<std::string>(), r["checks"].get<int>(),
                     r["violations"].get<int>(), r["explained"].get<int>());
  for (const bool want_explained : {true, false})
    for (const auto& c : checks) {
      if (c.ok || c.explained.empty() == want_explained) continue;
      t += fmt::format("{} {}: {}: {}\n", want_explained ? "EXPLAINED" : "VIOLATION", c.relation,
                       fmt_ratio(c), c.detail);
      for (const auto& r : c.runs) t += "  " + (paths.count(r) ? paths.at(r) : r) + "\n";
      if (want_explained) t += "  why: " + c.explained + "\n";
    }
  return t;
}

}  // namespace

StatusOr<Outcome> run_props(const PropsStudySpec& a, const Console& console) {
  const std::string grid = absolute_path(resolve_path(a.grid, ""));
  auto j = config::read_json_file(grid);
  if (!j) return props_error(j.status().message());
  auto spec = parse_props_spec(*j, grid);
  if (!spec) return props_error(spec.status().message());
  const std::string dir = a.out.empty() ? "out/props/" + spec->name : a.out;
  std::error_code ec;
  fs::create_directories(dir + "/runs", ec);
  if (ec) return props_error(fmt::format("{}: cannot create the directory: {}", dir, ec.message()));

  Planner planner(*spec, a.sets, dir);
  if (Status st = planner.load(); !st.is_ok()) return props_error(st.message());
  const std::vector<PropsRun> runs = expand_props(*spec);
  std::vector<RunOutcome> outcomes(runs.size());
  std::vector<std::string> skipped;
  std::vector<ChildJob> todo;
  std::vector<size_t> todo_ix;
  const Executor ex(a.jobs, console);
  const std::string exe = self_exe();
  for (size_t i = 0; i < runs.size(); ++i) {
    auto p = planner.plan(runs[i]);
    if (!p) return props_error(p.status().message());
    if (!p->skip.empty()) {
      skipped.push_back(runs[i].name + ": " + p->skip);
      continue;
    }
    const std::string stem = absolute_path(dir + "/runs/" + runs[i].name);
    outcomes[i].path = stem + ".json";
    ChildJob job{runs[i].name, {}, stem + ".log", stem + ".json", stem + ".run"};
    job.args = {exe,
                "run",
                spec->scenarios[runs[i].scenario].file,
                "--quiet",
                "--out",
                job.result,
                "--set",
                "sim.progress=false"};
    for (const auto& s : p->sets) job.args.insert(job.args.end(), {"--set", s});
    job.args.insert(job.args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
    if (ex.done_before(job, &outcomes[i].code)) continue;
    todo.push_back(std::move(job));
    todo_ix.push_back(i);
  }
  console.err(fmt::format("props {}: {} runs, {} skipped, {} to run ({} done before), {} at a time\n",
                          spec->name, runs.size(), skipped.size(), todo.size(),
                          runs.size() - skipped.size() - todo.size(), ex.jobs()));
  const auto t0 = std::chrono::steady_clock::now();
  const auto ends = ex.run(todo);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int bad_input = 0;
  for (size_t k = 0; k < ends.size(); ++k) {
    const size_t i = todo_ix[k];
    outcomes[i].code = ends[k].code;
    if (ends[k].code == 2 || ends[k].code == 127) {
      ++bad_input;
      console.err(fmt::format("dpsim: props: {}: exit {} (bad input); its log: {}\n", runs[i].name,
                              ends[k].code, todo[k].log));
    }
  }
  for (auto& o : outcomes) {
    if (o.code == -1) continue;
    o.result = read_json_file(o.path);
    if (o.result.is_discarded()) o.result = nlohmann::json();
  }
  const auto checks = evaluate_props(*spec, runs, outcomes);
  nlohmann::json rep = props_report(*spec, runs, outcomes, checks, skipped);
  rep["wall_s"] = wall;
  const std::string err = write_file_atomically(dir + "/props.json", rep.dump(1) + "\n");
  if (!err.empty()) return props_error(err);
  std::map<std::string, std::string> paths;
  for (size_t i = 0; i < runs.size(); ++i) paths[runs[i].name] = outcomes[i].path;
  std::string t = fmt::format("props {}: {} runs ({} skipped), {:.0f} s wall for {} of them\n", spec->name,
                              rep["runs"].get<int>(), skipped.size(), wall, todo.size());
  for (const auto& s : skipped) t += "  skipped " + s + "\n";
  t += report_text(rep, checks, paths);
  t += fmt::format("report: {}/props.json\n", dir);
  if (bad_input > 0) return Outcome{t, Verdict::kBadInput};
  for (const auto& c : checks)
    if (!c.ok && c.explained.empty()) return Outcome{t, Verdict::kFail};
  return Outcome{t + "every relation holds\n"};
}

}  // namespace sim::study
