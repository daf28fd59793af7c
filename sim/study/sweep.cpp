#include "sim/study/sweep.h"

#include <fmt/format.h>

#include <filesystem>

#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"
#include "sim/study/executor.h"
#include "sim/study/sweep_summary.h"

namespace sim::study {

namespace fs = std::filesystem;

namespace {

Status sweep_error(const std::string& msg) {
  return Status::error("sweep: " + msg);
}

// Builds summary.json and summary.csv of DIR from its manifest and whatever points have results; a point
// without one is named on Console::err. *missing gets the number of such points.
StatusOr<nlohmann::json> write_summary(const std::string& dir, const Console& console, int* missing) {
  const std::string mpath = dir + "/sweep.json";
  const nlohmann::json manifest = read_json_file(mpath);
  if (manifest.is_discarded()) return sweep_error(fmt::format("{}: cannot read the sweep manifest", mpath));
  auto points = points_of_manifest(manifest, mpath);
  if (!points) return sweep_error(points.status().message());
  const double threshold = manifest.value("threshold", 0.9);
  std::vector<nlohmann::json> rows;
  *missing = 0;
  for (const auto& p : *points) {
    const std::string rel = "points/" + p.name + ".json";
    const nlohmann::json r = read_json_file(dir + "/" + rel);
    const bool ok = !r.is_discarded() && r.is_object() && r.contains("summary") && r.contains("resources");
    if (!ok) {
      ++*missing;
      console.err(fmt::format("dpsim: sweep: no result for point {} ({}/{})\n", p.name, dir, rel));
    }
    rows.push_back(point_summary(p, ok ? &r : nullptr, threshold, rel));
  }
  nlohmann::json summary = sweep_summary(manifest, rows);
  for (const auto& [file, text] :
       {std::pair<std::string, std::string>{dir + "/summary.json", summary.dump(1) + "\n"},
        {dir + "/summary.csv", summary_csv(summary)}}) {
    const std::string err = write_file_atomically(file, text);
    if (!err.empty()) return sweep_error(err);
  }
  return summary;
}

std::string range_text(const nlohmann::json& r) {
  auto f = [](const nlohmann::json& x) {
    if (!x.is_number()) return std::string("-");
    const std::string s = cost::simple_fraction(x.get<double>());
    return s.empty() ? fmt::format("{:.4g}", x.get<double>()) : s;
  };
  return fmt::format("{} <= P/D <= {}", f(r["pd_min"]), f(r["pd_max"]));
}

// The table of points, the analytic range and each measured range, then where the summary is.
std::string summary_text(const nlohmann::json& s, const std::string& dir) {
  std::string t = fmt::format("{:<28} {:>7} {:>9} {:>6} {:>6} {:>6} {:>6} {:>6}  {}\n", "point", "P/D",
                              "JCT s", "snic", "cnicR", "cnicW", "dram", "gpu", "verdict");
  for (const auto& p : s["points"]) {
    const std::string name = p["name"].get<std::string>();
    if (!p["jct_s"].is_number()) {
      t += fmt::format("{:<28} {:7.3f}   (no result)\n", name, p["pd"].get<double>());
      continue;
    }
    const auto& u = p["utilization"];
    t += fmt::format("{:<28} {:7.3f} {:9.2f} {:6.2f} {:6.2f} {:6.2f} {:6.2f} {:6.2f}  {}\n", name,
                     p["pd"].get<double>(), p["jct_s"].get<double>(), u["snic"].get<double>(),
                     u["cnic_read"].get<double>(), u["cnic_write"].get<double>(), u["dram"].get<double>(),
                     u["gpu"].get<double>(),
                     p["bottleneck_free"] == true ? "bottleneck-free"
                                                  : "limited by " + p["first_saturated"].get<std::string>());
  }
  const nlohmann::json& analytic = s["analytic_range"];
  const bool hbm = analytic.is_object() && analytic.value("de_buffer", "") == "hbm";
  t += fmt::format("analytic range (DualPath 4.2{}): {}\n",
                   hbm ? ", DE buffer in HBM: (H1)-(H7) of sim/README.md" : "", range_text(analytic));
  for (const auto& r : s["measured_ranges"])
    t += fmt::format("measured range {}: {}\n", r["sets"].dump(), range_text(r));
  return t + fmt::format("summary: {}/summary.json, {}/summary.csv\n", dir, dir);
}

StatusOr<Outcome> summarise(const std::string& dir, const Console& console, bool runs_ok) {
  int missing = 0;
  auto s = write_summary(dir, console, &missing);
  if (!s) return s.status();
  return Outcome{summary_text(*s, dir), runs_ok && missing == 0 ? Verdict::kPass : Verdict::kFail};
}

// The (P, D) grid of the spec: exactly one of --pd, --ratios (with --nodes) or --p (with --d).
StatusOr<std::vector<GridPoint>> grid_of(const SweepSpec& a) {
  const int modes = !a.pd.empty() + !a.ratios.empty() + !a.p_range.empty();
  if (modes != 1)
    return sweep_error("expected exactly one of --pd, --ratios (with --nodes) or --p (with --d)");
  if (a.threshold <= 0 || a.threshold > 1)
    return sweep_error(fmt::format("--threshold: expected a number in (0, 1], got {}", a.threshold));
  auto grid = !a.pd.empty()       ? parse_pd_list(a.pd)
              : !a.ratios.empty() ? parse_ratios(a.ratios, a.nodes)
                                  : parse_p_range(a.p_range, a.d);
  if (!grid) return sweep_error(grid.status().message());
  return grid;
}

// The overrides of one point, after the sweep's own.
std::vector<std::string> point_sets(const SweepPoint& p) {
  std::vector<std::string> s = {fmt::format("cluster.prefill_nodes={}", p.pd.p),
                                fmt::format("cluster.decode_nodes={}", p.pd.d)};
  for (const auto& [k, v] : p.sets) s.push_back(k + "=" + v);
  return s;
}

}  // namespace

StatusOr<Outcome> run_sweep(const SweepSpec& a, const Console& console) {
  if (!a.merge.empty()) return summarise(a.merge, console, true);
  if (a.scenario.empty()) return sweep_error("expected a SCENARIO (or --merge DIR)");
  auto grid = grid_of(a);
  if (!grid) return grid.status();
  std::vector<SetList> lists;
  for (const auto& s : a.set_lists) {
    auto l = parse_set_list(s);
    if (!l) return sweep_error(l.status().message());
    lists.push_back(*l);
  }
  // Every point is a child run, and each is checked before any runs: a grid beyond kMaxSweepPoints is a slip
  // (--p 1..2000000), refused before it is expanded.
  double size = static_cast<double>(grid->size());
  for (const auto& l : lists) size *= static_cast<double>(l.values.size());
  if (size > kMaxSweepPoints)
    return sweep_error(fmt::format(
        "a grid of {:.0f} points (the --pd/--ratios/--p points times each --set-list's values): expected at "
        "most {} (each point is a run; narrow the grid)",
        size, kMaxSweepPoints));
  const std::string scenario = absolute_path(resolve_path(a.scenario, ""));
  auto sc = config::load_scenario(scenario, a.sets);  // fail early on a bad scenario or --set
  if (!sc) return sweep_error(sc.status().message());
  const auto points = expand_grid(*grid, lists);
  for (const auto& p : points) {  // and on a bad point (e.g. weights that do not fit on 1 node)
    std::vector<std::string> sets = a.sets;
    for (const auto& s : point_sets(p)) sets.push_back(s);
    auto check = config::load_scenario(scenario, sets);
    if (!check) return sweep_error(fmt::format("point {}: {}", p.name, check.status().message()));
  }
  // The range of the scenario's DE buffer (cluster.de_buffer, as set for every point).
  nlohmann::json analytic = {{"pd_min", nullptr}, {"pd_max", nullptr}};
  if (auto range = cost::bottleneck_range(
          cost::sided_inputs(sc->prefill_hardware, sc->decode_hardware, sc->cluster.de_buffer));
      range && range->feasible)
    analytic = {{"pd_min", range->pd_min}, {"pd_max", range->pd_max}};
  analytic["de_buffer"] = config::name(sc->cluster.de_buffer);

  const std::string dir = a.out;
  std::error_code ec;
  fs::create_directories(dir + "/points", ec);
  if (ec) return sweep_error(fmt::format("{}: cannot create the directory: {}", dir, ec.message()));
  const std::string err = write_file_atomically(
      dir + "/sweep.json", manifest_json(scenario, a.threshold, *grid, points, analytic).dump(1) + "\n");
  if (!err.empty()) return sweep_error(err);

  const Executor ex(a.jobs, console);
  const std::string exe = self_exe();
  std::vector<ChildJob> all, todo;
  for (const auto& p : points) {
    ChildJob job{p.name, {}, dir + "/points/" + p.name + ".log", "", ""};
    job.result = absolute_path(dir + "/points/" + p.name + ".json");
    job.args = {exe, "run", scenario, "--quiet", "--out", job.result, "--set", "sim.progress=false"};
    for (const auto& s : a.sets) job.args.insert(job.args.end(), {"--set", s});
    for (const auto& s : point_sets(p)) job.args.insert(job.args.end(), {"--set", s});
    job.args.insert(job.args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
    if (!ex.done_before(job)) todo.push_back(job);
    all.push_back(std::move(job));
  }
  if (!a.emit_jobs.empty()) {
    if (Status st = ex.emit(a.emit_jobs, all); !st) return sweep_error(st.message());
    return Outcome{
        fmt::format("{} commands: {} (then: dpsim sweep --merge {})\n", all.size(), a.emit_jobs, dir)};
  }
  console.err(fmt::format("sweep: {} points, {} to run ({} already done), {} at a time\n", all.size(),
                          todo.size(), all.size() - todo.size(), ex.jobs()));
  const auto ends = ex.run(todo);
  bool runs_ok = true;
  for (size_t i = 0; i < ends.size(); ++i)
    if (ends[i].code != 0) {
      runs_ok = false;
      console.err("dpsim: sweep: " + Executor::failure(todo[i], ends[i].code) + "\n");
    }
  return summarise(dir, console, runs_ok);
}

}  // namespace sim::study
