#include "sim/study/ablation.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/study/executor.h"
#include "sim/study/systems.h"

namespace sim::study {

namespace {

// One configuration of the ablation: its label, file stem and the overrides that define it (complete,
// so a step does not depend on the scenario file's policy block).
struct Step {
  const char* label;
  const char* stem;
  std::vector<std::string> sets;
};

const std::vector<Step>& ablation_steps() {
  static const std::vector<Step> steps = {{"Basic", "basic", kBasic},
                                          {"+layerwise",
                                           "layerwise",
                                           {"policy.read_path=pe", "policy.layerwise=true",
                                            "policy.scheduler=round_robin", "policy.batching=fifo"}},
                                          {"+dual-path (load-blind)",
                                           "dualpath-blind",
                                           {"policy.read_path=alternate", "policy.layerwise=true",
                                            "policy.scheduler=round_robin", "policy.batching=fifo"}},
                                          {"+dual-path (queue-aware)",
                                           "dualpath",
                                           {"policy.read_path=dualpath", "policy.layerwise=true",
                                            "policy.scheduler=round_robin", "policy.batching=fifo"}},
                                          {"+scheduler", "scheduler", kDualPath}};
  return steps;
}

// The two definitions of the ablation's steps (ablation.h), as indices into ablation_steps().
struct Definition {
  const char* name;
  const char* about;
  std::vector<size_t> steps;
};

const std::vector<Definition>& definitions() {
  static const std::vector<Definition> d = {
      {"paper",
       "the paper's: dual-path loading load-blind, the scheduler brings the queue-aware choice",
       {0, 1, 2, 4}},
      {"queue-aware",
       "dual-path loading already queue-aware, the scheduler adds Algorithm 1 alone",
       {0, 1, 3, 4}}};
  return d;
}

struct Run {
  int agents = 0;
  size_t step = 0;
};

double reduction_pct(double basic, double jct) {
  return basic > 0 ? 100.0 * (basic - jct) / basic : 0.0;
}

// The table: one row per agent count, each step's JCT and (after Basic) its reduction vs Basic.
std::string ablation_table(const nlohmann::json& summary) {
  std::string s = fmt::format("{:>8}", "agents");
  for (const auto& st : ablation_steps()) s += fmt::format("  {:>24}", st.label);
  s += "\n";
  for (const auto& row : summary.at("rows")) {
    s += fmt::format("{:>8}", row.at("agents").get<int>());
    for (const auto& r : row.at("runs")) {
      const double jct = r.at("jct_s").get<double>();
      std::string cell = fmt::format("{:.1f}", jct);
      if (r.at("step") != "basic") cell += fmt::format(" ({:+.1f}%)", -r.at("reduction_pct").get<double>());
      if (!r.at("complete").get<bool>()) cell += " *";
      s += fmt::format("  {:>24}", cell);
    }
    s += "\n";
  }
  s += "JCT (s); (x%) = change relative to Basic at the same agent count; a negative x is a reduction; * = "
       "the "
       "run did not complete.\n";
  for (const auto& d : definitions()) {
    s += fmt::format("{}: {}:", d.name, d.about);
    for (size_t k = 0; k < d.steps.size(); ++k)
      s += fmt::format("{} {}", k == 0 ? "" : " ->", ablation_steps()[d.steps[k]].label);
    s += "\n";
  }
  return s;
}

}  // namespace

StatusOr<Outcome> run_ablation(const AblationSpec& a, const Console& console) {
  const std::string path = resolve_path(a.scenario, "");
  // Validate once here, so a bad scenario or override is reported before any child starts.
  auto sc = config::load_scenario(path, a.sets);
  if (!sc) return sc.status();
  for (int n : a.agents)
    if (n < 1) return Status::error(fmt::format("ablation: --agents: expected integers >= 1, got {}", n));
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  const auto& steps = ablation_steps();
  std::vector<Run> runs;
  std::vector<ChildJob> children;
  for (int n : a.agents) {
    for (size_t i = 0; i < steps.size(); ++i) {
      runs.push_back({n, i});
      ChildJob c;
      c.result = fmt::format("{}/{}-{}.json", a.out, n, steps[i].stem);
      c.args = {self_exe(), "run", path, "--quiet", "--out", c.result};
      auto set = [&c](const std::string& s) { c.args.insert(c.args.end(), {"--set", s}); };
      for (const auto& s : a.sets) set(s);
      set(fmt::format("workload.agents={}", n));
      if (a.jobs > 1) set("sim.progress=false");  // interleaved progress lines are noise
      for (const auto& s : steps[i].sets) set(s);
      set(kNoTimeline);
      set(kNoRequests);
      children.push_back(std::move(c));
    }
  }
  const Executor ex(a.jobs, console);
  console.err(fmt::format("{} runs, {} at a time\n", children.size(), ex.jobs()));
  const auto ends = ex.run(children, [&](size_t i, const ChildEnd& e) {
    console.err(fmt::format("{} {} agents, {} ({})\n", e.code == 0 ? "done" : "FAILED", runs[i].agents,
                            steps[runs[i].step].label, children[i].result));
  });
  for (size_t i = 0; i < ends.size(); ++i)
    if (ends[i].code != 0)
      return Status::error(fmt::format("ablation: a run failed (exit code {}): {}", ends[i].code,
                                       shell_line(children[i].args)));
  nlohmann::json summary = {{"scenario", path}, {"sets", a.sets}, {"steps", nlohmann::json::array()}};
  for (const auto& st : steps)
    summary["steps"].push_back({{"step", st.stem}, {"label", st.label}, {"sets", st.sets}});
  summary["definitions"] = nlohmann::json::object();
  for (const auto& d : definitions()) {
    nlohmann::json stems = nlohmann::json::array();
    for (size_t i : d.steps) stems.push_back(steps[i].stem);
    summary["definitions"][d.name] = {{"about", d.about}, {"steps", stems}};
  }
  summary["rows"] = nlohmann::json::array();
  for (size_t k = 0; k < a.agents.size(); ++k) {
    nlohmann::json row = {{"agents", a.agents[k]}, {"runs", nlohmann::json::array()}};
    double basic = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const std::string& out = children[k * steps.size() + i].result;
      const nlohmann::json r = read_json_file(out);
      if (r.is_discarded() || !r.contains("summary"))
        return Status::error(fmt::format("ablation: {}: not a results JSON", out));
      const double jct = r.at("summary").at("jct_s").get<double>();
      if (i == 0) basic = jct;
      row["runs"].push_back({{"step", steps[i].stem},
                             {"jct_s", jct},
                             {"reduction_pct", reduction_pct(basic, jct)},
                             {"complete", r.value("complete", false)},
                             {"results", out}});
    }
    summary["rows"].push_back(row);
  }
  const std::string summary_path = a.out + "/summary.json";
  const std::string err = write_file_atomically(summary_path, summary.dump(1) + "\n");
  if (!err.empty()) return Status::error(err);
  return Outcome{
      fmt::format("ablation of {} ({}, {}P{}D)\n\n", sc->name, sc->model.name, sc->cluster.prefill_nodes,
                  sc->cluster.decode_nodes) +
      ablation_table(summary) +
      fmt::format("\nresults: {}/<agents>-{{basic,layerwise,dualpath-blind,dualpath,scheduler}}.json, {}\n",
                  a.out, summary_path)};
}

}  // namespace sim::study
