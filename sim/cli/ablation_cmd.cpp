// `dpsim ablation SCENARIO [--agents 1024,2048] [--jobs N] [--out DIR] [--set k=v]...`: DualPath's
// ablation (paper §7.4; PAPER.md §6): Basic -> + layerwise prefill -> + dual-path loading -> + scheduler,
// each step adding one toggle to the previous one, at every agent count. Each run is a child `dpsim run`
// process (SimGrid runs one simulation per process), up to --jobs at a time; its results JSON goes to
// DIR/<agents>-<step>.json. Prints the four JCTs per agent count and each step's JCT reduction relative
// to Basic, and writes the same as DIR/summary.json.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/study/executor.h"
#include "sim/cli/commands.h"
#include "sim/config/scenario.h"
#include "sim/core/paths.h"

namespace sim::cli {

using namespace study;  // the studies moved to sim/study/; the commands are made thin next

namespace {

// One configuration of the ablation: its label, file stem and the overrides that define it (complete,
// so a step does not depend on the scenario file's policy block).
struct Step {
  const char* label;
  const char* stem;
  std::vector<std::string> sets;
};

const std::vector<Step>& ablation_steps() {
  static const std::vector<Step> steps = {
      {"Basic", "basic", {"policy.read_path=pe", "policy.layerwise=false", "policy.scheduler=round_robin"}},
      {"+layerwise",
       "layerwise",
       {"policy.read_path=pe", "policy.layerwise=true", "policy.scheduler=round_robin"}},
      {"+dual-path",
       "dualpath",
       {"policy.read_path=dualpath", "policy.layerwise=true", "policy.scheduler=round_robin"}},
      {"+scheduler",
       "scheduler",
       {"policy.read_path=dualpath", "policy.layerwise=true", "policy.scheduler=dualpath"}}};
  return steps;
}

struct Job {
  int agents = 0;
  size_t step = 0;
  std::string out;  // results JSON path
};

// Progress on stderr as each child run ends.
void report_done(size_t index, int code, void* ctx) {
  const auto& all = *static_cast<const std::vector<Job>*>(ctx);
  std::fprintf(stderr, "%s %d agents, %s (%s)\n", code == 0 ? "done" : "FAILED", all[index].agents,
               ablation_steps()[all[index].step].label, all[index].out.c_str());
}

double reduction_pct(double basic, double jct) {
  return basic > 0 ? 100.0 * (basic - jct) / basic : 0.0;
}

// The table: one row per agent count, each step's JCT and (after Basic) its reduction vs Basic.
std::string ablation_table(const nlohmann::json& summary) {
  std::string s = fmt::format("{:>8}", "agents");
  for (const auto& st : ablation_steps()) s += fmt::format("  {:>20}", std::string(st.label) + " JCT (s)");
  s += "\n";
  for (const auto& row : summary.at("rows")) {
    s += fmt::format("{:>8}", row.at("agents").get<int>());
    for (const auto& r : row.at("runs")) {
      const double jct = r.at("jct_s").get<double>();
      std::string cell = fmt::format("{:.1f}", jct);
      if (r.at("step") != "basic") cell += fmt::format(" ({:+.1f}%)", -r.at("reduction_pct").get<double>());
      if (!r.at("complete").get<bool>()) cell += " *";
      s += fmt::format("  {:>20}", cell);
    }
    s += "\n";
  }
  s += "(x%) = JCT change relative to Basic at the same agent count; a negative x is a reduction; * = the "
       "run did not complete.\n";
  return s;
}

}  // namespace

void add_ablation_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "ablation", "Basic -> +layerwise prefill -> +dual-path loading -> +scheduler: JCTs and reductions");
  static std::string scenario;
  static std::vector<int> agents = {1024, 2048};
  static int jobs = 1;
  static std::string out_dir = "out/ablation";
  static std::vector<std::string> sets;
  cmd->add_option("scenario", scenario, "Scenario JSON (e.g. scenarios/paper/ablation-ds660b-64k.json)")
      ->required();
  cmd->add_option("--agents", agents, "Agent counts, comma-separated")->delimiter(',')->capture_default_str();
  cmd->add_option("--jobs", jobs, "Child runs at a time")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--out", out_dir, "Directory of the results JSONs and summary.json")->capture_default_str();
  cmd->add_option("--set", sets, "Overrides applied to every run (before the step's policy toggles)");
  cmd->callback([exit_code]() {
    const std::string path = resolve_path(scenario, "");
    // Validate once here, so a bad scenario or override is reported before any child starts.
    auto sc = load_scenario_or_report(path, sets, exit_code);
    if (!sc) return;
    for (int a : agents) {
      if (a < 1) {
        std::fprintf(stderr, "dpsim: ablation: --agents: expected integers >= 1, got %d\n", a);
        *exit_code = 2;
        return;
      }
    }
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    std::vector<Job> all;
    std::vector<ChildJob> children;
    for (int a : agents) {
      for (size_t i = 0; i < ablation_steps().size(); ++i) {
        all.push_back({a, i, fmt::format("{}/{}-{}.json", out_dir, a, ablation_steps()[i].stem)});
        ChildJob c;
        c.args = {self_exe(), "run", path, "--quiet", "--out", all.back().out};
        auto set = [&c](const std::string& s) {
          c.args.push_back("--set");
          c.args.push_back(s);
        };
        for (const auto& s : sets) set(s);
        set(fmt::format("workload.agents={}", a));
        if (jobs > 1) set("sim.progress=false");  // interleaved progress lines are noise
        for (const auto& s : ablation_steps()[i].sets) set(s);
        set(kNoTimeline);
        set(kNoRequests);
        children.push_back(std::move(c));
      }
    }
    std::fprintf(stderr, "%zu runs, %d at a time\n", children.size(), jobs);
    const auto codes = run_children(children, jobs, report_done, &all);
    for (size_t i = 0; i < codes.size(); ++i) {
      if (codes[i] != 0) {
        std::fprintf(stderr, "dpsim: ablation: a run failed (exit code %d): %s\n", codes[i],
                     shell_line(children[i].args).c_str());
        *exit_code = 2;
        return;
      }
    }
    nlohmann::json summary = {{"scenario", path}, {"sets", sets}, {"steps", nlohmann::json::array()}};
    for (const auto& st : ablation_steps())
      summary["steps"].push_back({{"step", st.stem}, {"label", st.label}, {"sets", st.sets}});
    summary["rows"] = nlohmann::json::array();
    for (size_t k = 0; k < agents.size(); ++k) {
      nlohmann::json row = {{"agents", agents[k]}, {"runs", nlohmann::json::array()}};
      double basic = 0;
      for (size_t i = 0; i < ablation_steps().size(); ++i) {
        const Job& j = all[k * ablation_steps().size() + i];
        std::ifstream in(j.out);
        const auto r = nlohmann::json::parse(in, nullptr, false);
        if (r.is_discarded() || !r.contains("summary")) {
          std::fprintf(stderr, "dpsim: ablation: %s: not a results JSON\n", j.out.c_str());
          *exit_code = 2;
          return;
        }
        const double jct = r.at("summary").at("jct_s").get<double>();
        if (i == 0) basic = jct;
        row["runs"].push_back({{"step", ablation_steps()[i].stem},
                               {"jct_s", jct},
                               {"reduction_pct", reduction_pct(basic, jct)},
                               {"complete", r.value("complete", false)},
                               {"results", j.out}});
      }
      summary["rows"].push_back(row);
    }
    const std::string summary_path = out_dir + "/summary.json";
    const std::string err = write_file_atomically(summary_path, summary.dump(1) + "\n");
    if (!err.empty()) {
      std::fprintf(stderr, "dpsim: %s\n", err.c_str());
      *exit_code = 2;
      return;
    }
    std::printf("ablation of %s (%s, %dP%dD)\n\n", sc->name.c_str(), sc->model.name.c_str(),
                sc->cluster.prefill_nodes, sc->cluster.decode_nodes);
    std::printf("%s", ablation_table(summary).c_str());
    std::printf("\nresults: %s/<agents>-{basic,layerwise,dualpath,scheduler}.json, %s\n", out_dir.c_str(),
                summary_path.c_str());
  });
}

}  // namespace sim::cli
