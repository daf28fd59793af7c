// `dpsim props GRID.json [--set k=v]... [--jobs N] [--out DIR]`: runs a property grid (scenarios x P:D x
// policies, plus monotone variants) as child `dpsim run`s, in parallel and resumable, then checks the
// relations of sim/cli/props.h on the results and prints each violation with its pair of runs and
// figures. Exit 0 when every relation holds (or each violation is explained within its limit), 1 when
// one does not, 2 on bad input. Format: scenarios/props/README.md.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "sim/cli/child_runs.h"
#include "sim/cli/commands.h"
#include "sim/cli/props.h"
#include "sim/config/json_util.h"
#include "sim/config/scenario.h"
#include "sim/core/paths.h"

namespace sim::cli {

namespace fs = std::filesystem;

namespace {

struct PropsArgs {
  std::string grid, out;
  std::vector<std::string> sets;
  int jobs = 0;
};

int fail(const std::string& msg) {
  std::fprintf(stderr, "dpsim: props: %s\n", msg.c_str());
  return 2;
}

// Identifies the dpsim build: a rebuilt executable reruns every run (its results may differ).
std::string exe_stamp(const std::string& exe) {
  std::error_code ec;
  const auto size = fs::file_size(exe, ec);
  const auto mtime = fs::last_write_time(exe, ec).time_since_epoch().count();
  return fmt::format("{} {} {}", exe, size, mtime);
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
  const std::string path = fs::absolute(dir + "/hardware/" + stem + ".json").lexically_normal().string();
  *err = write_file_atomically(path, j->dump(1) + "\n");
  return err->empty() ? path : "";
}

// The overrides that make `run` out of its scenario, or an empty optional with the reason it is skipped.
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
    std::string err;
    // A variant is a changed `hardware` file: with hardware_prefill / hardware_decode it would miss a role.
    if ((run.variant == "snic" || run.variant == "storage") &&
        (base.mixed_hardware || base.prefill_hardware_file != base.hardware_file)) {
      p.skip = "no hardware variant: the scenario has a hardware file per role (hardware_prefill/_decode)";
      return p;
    }
    if (run.variant == "snic") {
      const std::string path = variant_file(
          base, fmt::format("snic-x{}", spec_.snic_factor),
          [&](nlohmann::json& j) { j["snic"]["bw_Bps"] = hw.snic_bw_Bps * spec_.snic_factor; }, &err);
      if (path.empty()) return Status::error(err);
      p.sets.push_back("hardware=" + path);
    } else if (run.variant == "storage") {
      if (hw.storage_bw_per_node_Bps <= 0 && hw.storage_efficiency >= 1) {
        p.skip = "no storage variant: storage reads already run at the SNIC line rate";
        return p;
      }
      const std::string path = variant_file(
          base, fmt::format("storage-x{}", spec_.storage_factor),
          [&](nlohmann::json& j) {
            if (hw.storage_bw_per_node_Bps > 0)
              j["storage"]["bw_per_node_Bps"] = hw.storage_bw_per_node_Bps * spec_.storage_factor;
            else
              j["storage"]["efficiency"] = std::min(1.0, hw.storage_efficiency * spec_.storage_factor);
          },
          &err);
      if (path.empty()) return Status::error(err);
      p.sets.push_back("hardware=" + path);
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
    const std::string path = hardware_variant(sc, dir_, tag, change, err);
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

void print_report(const nlohmann::json& rep, const std::vector<PropsCheck>& checks,
                  const std::map<std::string, std::string>& paths) {
  std::printf("%-26s %7s %11s %10s\n", "relation", "checks", "violations", "explained");
  for (const auto& r : rep["relations"])
    std::printf("%-26s %7d %11d %10d\n", r["name"].get<std::string>().c_str(), r["checks"].get<int>(),
                r["violations"].get<int>(), r["explained"].get<int>());
  for (const bool want_explained : {true, false})
    for (const auto& c : checks) {
      if (c.ok || c.explained.empty() == want_explained) continue;
      std::printf("%s %s: %s: %s\n", want_explained ? "EXPLAINED" : "VIOLATION", c.relation.c_str(),
                  fmt_ratio(c).c_str(), c.detail.c_str());
      for (const auto& r : c.runs) std::printf("  %s\n", paths.count(r) ? paths.at(r).c_str() : r.c_str());
      if (want_explained) std::printf("  why: %s\n", c.explained.c_str());
    }
}

int run_props(const PropsArgs& a) {
  const std::string grid = fs::absolute(resolve_path(a.grid, "")).lexically_normal().string();
  auto j = config::read_json_file(grid);
  if (!j) return fail(j.status().message());
  auto spec = parse_props_spec(*j, grid);
  if (!spec) return fail(spec.status().message());
  const std::string dir = a.out.empty() ? "out/props/" + spec->name : a.out;
  std::error_code ec;
  fs::create_directories(dir + "/runs", ec);
  if (ec) return fail(fmt::format("{}: cannot create the directory: {}", dir, ec.message()));

  Planner planner(*spec, a.sets, dir);
  if (Status st = planner.load(); !st.is_ok()) return fail(st.message());
  const std::vector<PropsRun> runs = expand_props(*spec);
  std::vector<RunOutcome> outcomes(runs.size());
  std::vector<std::string> skipped, todo_names;
  std::vector<ChildJob> todo;
  std::vector<size_t> todo_ix;
  const std::string exe = self_exe();
  const std::string stamp = exe_stamp(exe);
  for (size_t i = 0; i < runs.size(); ++i) {
    auto p = planner.plan(runs[i]);
    if (!p) return fail(p.status().message());
    if (!p->skip.empty()) {
      skipped.push_back(runs[i].name + ": " + p->skip);
      continue;
    }
    const std::string stem = fs::absolute(dir + "/runs/" + runs[i].name).lexically_normal().string();
    outcomes[i].path = stem + ".json";
    std::vector<std::string> args = {exe,
                                     "run",
                                     spec->scenarios[runs[i].scenario].file,
                                     "--quiet",
                                     "--out",
                                     stem + ".json",
                                     "--set",
                                     "sim.progress=false"};
    for (const auto& s : p->sets) args.insert(args.end(), {"--set", s});
    args.insert(args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
    // Resume: a run whose command and dpsim build are unchanged and that finished before is not run
    // again. Its record (<stem>.run) holds its exit code, then the build and the command.
    const auto run_file = config::read_text_file(stem + ".run", "a run record");
    const std::string record = run_file ? *run_file : "";
    const size_t nl = record.find('\n');
    if (nl != std::string::npos && record.substr(nl + 1) == stamp + "\n" + shell_line(args) + "\n" &&
        result_file_complete(stem + ".json")) {
      outcomes[i].code = std::atoi(record.substr(0, nl).c_str());
      continue;
    }
    fs::remove(stem + ".run", ec);
    todo.push_back({args, stem + ".log"});
    todo_ix.push_back(i);
    todo_names.push_back(runs[i].name);
  }
  const int jobs = default_jobs(a.jobs);
  std::fprintf(stderr, "props %s: %zu runs, %zu skipped, %zu to run (%zu done before), %d at a time\n",
               spec->name.c_str(), runs.size(), skipped.size(), todo.size(),
               runs.size() - skipped.size() - todo.size(), jobs);
  const auto t0 = std::chrono::steady_clock::now();
  ChildProgress prog{todo_names};
  const auto codes = run_children(todo, jobs, print_child_progress, &prog);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int bad_input = 0;
  for (size_t k = 0; k < codes.size(); ++k) {
    const size_t i = todo_ix[k];
    outcomes[i].code = codes[k];
    const std::string stem = outcomes[i].path.substr(0, outcomes[i].path.size() - 5);
    write_file_atomically(stem + ".run",
                          fmt::format("{}\n{}\n{}\n", codes[k], stamp, shell_line(todo[k].args)));
    if (codes[k] == 2 || codes[k] == 127) {
      ++bad_input;
      std::fprintf(stderr, "dpsim: props: %s: exit %d (bad input); its log: %s\n", runs[i].name.c_str(),
                   codes[k], todo[k].log.c_str());
    }
  }
  for (auto& o : outcomes) {
    if (o.code == -1) continue;
    std::ifstream in(o.path);
    o.result = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    if (o.result.is_discarded()) o.result = nlohmann::json();
  }
  const auto checks = evaluate_props(*spec, runs, outcomes);
  nlohmann::json rep = props_report(*spec, runs, outcomes, checks, skipped);
  rep["wall_s"] = wall;
  const std::string err = write_file_atomically(dir + "/props.json", rep.dump(1) + "\n");
  if (!err.empty()) return fail(err);
  std::map<std::string, std::string> paths;
  for (size_t i = 0; i < runs.size(); ++i) paths[runs[i].name] = outcomes[i].path;
  std::printf("props %s: %d runs (%zu skipped), %.0f s wall for %zu of them\n", spec->name.c_str(),
              rep["runs"].get<int>(), skipped.size(), wall, todo.size());
  for (const auto& s : skipped) std::printf("  skipped %s\n", s.c_str());
  print_report(rep, checks, paths);
  std::printf("report: %s/props.json\n", dir.c_str());
  if (bad_input > 0) return 2;
  for (const auto& c : checks)
    if (!c.ok && c.explained.empty()) return 1;
  std::printf("every relation holds\n");
  return 0;
}

}  // namespace

void add_props_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "props",
      "Run a property grid and check the relations that must hold on any scenario (exit 1 if one breaks)");
  static PropsArgs a;
  cmd->add_option("grid", a.grid, "Grid JSON (scenarios/props/*.json)")->required();
  cmd->add_option("--set", a.sets, "Override applied to every run, after the grid's own (repeatable)");
  cmd->add_option("--jobs,-j", a.jobs, "Child runs at a time (default: the number of cores)");
  cmd->add_option("--out", a.out, "Output directory (default: out/props/<grid name>)");
  cmd->callback([exit_code]() { *exit_code = run_props(a); });
}

}  // namespace sim::cli
