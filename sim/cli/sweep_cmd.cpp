// `dpsim sweep SCENARIO (--pd 1:7,2:4 | --ratios 1/9,...,5 --nodes N | --p 1..8 --d 4)
//  [--set-list key=v1,v2]... [--set k=v]... [--jobs N] [--out DIR] [--threshold U] [--emit-jobs FILE]`
// and `dpsim sweep --merge DIR`: one child `dpsim run` per point (DIR/points/<name>.json, resumable),
// then DIR/summary.json and DIR/summary.csv with the measured and analytic bottleneck-free ranges.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/cli/child_runs.h"
#include "sim/cli/commands.h"
#include "sim/cli/sweep_summary.h"
#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"

namespace sim::cli {

namespace fs = std::filesystem;

namespace {

struct SweepArgs {
  std::string scenario, pd, ratios, p_range, out = "out/sweep", emit_jobs, merge;
  int nodes = 0, d = 0, jobs = 0;
  double threshold = 0.9;
  std::vector<std::string> set_lists, sets;
};

int fail(const std::string& msg) {
  std::fprintf(stderr, "dpsim: sweep: %s\n", msg.c_str());
  return 2;
}

// Builds summary.json and summary.csv of DIR from its manifest and whatever points have results.
// Returns the number of points without a result, or -1 on error (printed).
int write_summary(const std::string& dir, nlohmann::json* summary_out = nullptr) {
  const std::string mpath = dir + "/sweep.json";
  const nlohmann::json manifest = read_json_file(mpath);
  if (manifest.is_discarded()) {
    fail(fmt::format("{}: cannot read the sweep manifest", mpath));
    return -1;
  }
  auto points = points_of_manifest(manifest, mpath);
  if (!points) {
    fail(points.status().message());
    return -1;
  }
  const double threshold = manifest.value("threshold", 0.9);
  std::vector<nlohmann::json> rows;
  int missing = 0;
  for (const auto& p : *points) {
    const std::string rel = "points/" + p.name + ".json";
    const nlohmann::json r = read_json_file(dir + "/" + rel);
    const bool ok = !r.is_discarded() && r.is_object() && r.contains("summary") && r.contains("resources");
    if (!ok) {
      ++missing;
      std::fprintf(stderr, "dpsim: sweep: no result for point %s (%s/%s)\n", p.name.c_str(), dir.c_str(),
                   rel.c_str());
    }
    rows.push_back(point_summary(p, ok ? &r : nullptr, threshold, rel));
  }
  const nlohmann::json summary = sweep_summary(manifest, rows);
  for (const auto& [file, text] :
       {std::pair<std::string, std::string>{dir + "/summary.json", summary.dump(1) + "\n"},
        {dir + "/summary.csv", summary_csv(summary)}}) {
    const std::string err = write_file_atomically(file, text);
    if (!err.empty()) {
      fail(err);
      return -1;
    }
  }
  if (summary_out) *summary_out = summary;
  return missing;
}

std::string range_text(const nlohmann::json& r) {
  auto f = [](const nlohmann::json& x) {
    if (!x.is_number()) return std::string("-");
    const std::string s = cost::simple_fraction(x.get<double>());
    return s.empty() ? fmt::format("{:.4g}", x.get<double>()) : s;
  };
  return fmt::format("{} <= P/D <= {}", f(r["pd_min"]), f(r["pd_max"]));
}

void print_summary(const nlohmann::json& s) {
  std::printf("%-28s %7s %9s %6s %6s %6s %6s %6s  %s\n", "point", "P/D", "JCT s", "snic", "cnicR", "cnicW",
              "dram", "gpu", "verdict");
  for (const auto& p : s["points"]) {
    if (!p["jct_s"].is_number()) {
      std::printf("%-28s %7.3f   (no result)\n", p["name"].get<std::string>().c_str(), p["pd"].get<double>());
      continue;
    }
    const auto& u = p["utilization"];
    std::printf("%-28s %7.3f %9.2f %6.2f %6.2f %6.2f %6.2f %6.2f  %s\n", p["name"].get<std::string>().c_str(),
                p["pd"].get<double>(), p["jct_s"].get<double>(), u["snic"].get<double>(),
                u["cnic_read"].get<double>(), u["cnic_write"].get<double>(), u["dram"].get<double>(),
                u["gpu"].get<double>(),
                p["bottleneck_free"] == true
                    ? "bottleneck-free"
                    : ("limited by " + p["first_saturated"].get<std::string>()).c_str());
  }
  const nlohmann::json& analytic = s["analytic_range"];
  const bool hbm = analytic.is_object() && analytic.value("de_buffer", "") == "hbm";
  std::printf("analytic range (DualPath 4.2%s): %s\n",
              hbm ? ", DE buffer in HBM: (H1)-(H7) of sim/README.md" : "", range_text(analytic).c_str());
  for (const auto& r : s["measured_ranges"])
    std::printf("measured range %s: %s\n", r["sets"].dump().c_str(), range_text(r).c_str());
}

int run_sweep(const SweepArgs& a) {
  if (!a.merge.empty()) {
    nlohmann::json s;
    const int missing = write_summary(a.merge, &s);
    if (missing < 0) return 2;
    print_summary(s);
    std::printf("summary: %s/summary.json, %s/summary.csv\n", a.merge.c_str(), a.merge.c_str());
    return missing == 0 ? 0 : 1;
  }
  if (a.scenario.empty()) return fail("expected a SCENARIO (or --merge DIR)");
  const int modes = !a.pd.empty() + !a.ratios.empty() + !a.p_range.empty();
  if (modes != 1) return fail("expected exactly one of --pd, --ratios (with --nodes) or --p (with --d)");
  if (a.threshold <= 0 || a.threshold > 1)
    return fail(fmt::format("--threshold: expected a number in (0, 1], got {}", a.threshold));
  auto grid = !a.pd.empty()       ? parse_pd_list(a.pd)
              : !a.ratios.empty() ? parse_ratios(a.ratios, a.nodes)
                                  : parse_p_range(a.p_range, a.d);
  if (!grid) return fail(grid.status().message());
  std::vector<SetList> lists;
  for (const auto& s : a.set_lists) {
    auto l = parse_set_list(s);
    if (!l) return fail(l.status().message());
    lists.push_back(*l);
  }
  const std::string scenario = fs::absolute(resolve_path(a.scenario, "")).lexically_normal().string();
  auto sc = config::load_scenario(scenario, a.sets);  // fail early on a bad scenario or --set
  if (!sc) return fail(sc.status().message());
  const auto points = expand_grid(*grid, lists);
  for (const auto& p : points) {  // and on a bad point (e.g. weights that do not fit on 1 node)
    std::vector<std::string> sets = a.sets;
    sets.push_back(fmt::format("cluster.prefill_nodes={}", p.pd.p));
    sets.push_back(fmt::format("cluster.decode_nodes={}", p.pd.d));
    for (const auto& [k, v] : p.sets) sets.push_back(k + "=" + v);
    auto check = config::load_scenario(scenario, sets);
    if (!check) return fail(fmt::format("point {}: {}", p.name, check.status().message()));
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
  if (ec) return fail(fmt::format("{}: cannot create the directory: {}", dir, ec.message()));
  const std::string err = write_file_atomically(
      dir + "/sweep.json", manifest_json(scenario, a.threshold, *grid, points, analytic).dump(1) + "\n");
  if (!err.empty()) return fail(err);

  const std::string exe = self_exe();
  std::vector<ChildJob> todo;
  std::vector<SweepPoint> todo_points;
  std::string lines;
  for (const auto& p : points) {
    const std::string out = fs::absolute(dir + "/points/" + p.name + ".json").lexically_normal().string();
    std::vector<std::string> args = {exe,     "run", scenario, "--quiet",
                                     "--out", out,   "--set",  "sim.progress=false"};
    for (const auto& s : a.sets) args.insert(args.end(), {"--set", s});
    args.insert(args.end(), {"--set", fmt::format("cluster.prefill_nodes={}", p.pd.p), "--set",
                             fmt::format("cluster.decode_nodes={}", p.pd.d)});
    for (const auto& [k, v] : p.sets) args.insert(args.end(), {"--set", k + "=" + v});
    args.insert(args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
    lines += shell_line(args) + "\n";
    if (result_file_complete(out)) continue;  // resume: a finished point is not rerun
    todo.push_back({args, dir + "/points/" + p.name + ".log"});
    todo_points.push_back(p);
  }
  if (!a.emit_jobs.empty()) {
    const std::string e = write_file_atomically(a.emit_jobs, lines);
    if (!e.empty()) return fail(e);
    std::printf("%zu commands: %s (then: dpsim sweep --merge %s)\n", points.size(), a.emit_jobs.c_str(),
                dir.c_str());
    return 0;
  }
  const int jobs = default_jobs(a.jobs);
  std::fprintf(stderr, "sweep: %zu points, %zu to run (%zu already done), %d at a time\n", points.size(),
               todo.size(), points.size() - todo.size(), jobs);
  ChildProgress prog;
  for (const auto& p : todo_points) prog.names.push_back(p.name);
  const auto codes = run_children(todo, jobs, print_child_progress, &prog);
  int failed = 0;
  for (size_t i = 0; i < codes.size(); ++i)
    if (codes[i] != 0) {
      ++failed;
      std::fprintf(stderr, "dpsim: sweep: point %s failed (exit %d); its log: %s\n",
                   todo_points[i].name.c_str(), codes[i], todo[i].log.c_str());
    }
  nlohmann::json s;
  const int missing = write_summary(dir, &s);
  if (missing < 0) return 2;
  print_summary(s);
  std::printf("summary: %s/summary.json, %s/summary.csv\n", dir.c_str(), dir.c_str());
  return failed == 0 && missing == 0 ? 0 : 1;
}

}  // namespace

void add_sweep_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("sweep", "Sweep P/D (x --set-list) and measure the bottleneck-free range");
  static SweepArgs a;
  cmd->add_option("scenario", a.scenario, "Scenario JSON");
  cmd->add_option("--pd", a.pd, "Grid of P:D pairs, e.g. 1:7,2:4");
  cmd->add_option("--ratios", a.ratios, "Grid of P/D ratios, e.g. 1/9,1/7,1,7/2,5 (with --nodes)");
  cmd->add_option("--nodes", a.nodes, "Total nodes for --ratios (largest multiple of a+b that fits)");
  cmd->add_option("--p", a.p_range, "Grid of P: lo..hi or a list (with --d)");
  cmd->add_option("--d", a.d, "Decode nodes for --p");
  cmd->add_option("--set-list", a.set_lists, "One more dimension: key.path=v1,v2 (repeatable)");
  cmd->add_option("--set", a.sets, "Override applied to every point (repeatable)");
  cmd->add_option("--jobs,-j", a.jobs, "Child runs at a time (default: the number of cores)");
  cmd->add_option("--out", a.out, "Output directory")->capture_default_str();
  cmd->add_option("--threshold", a.threshold, "Utilisation that counts as saturated")->capture_default_str();
  cmd->add_option("--emit-jobs", a.emit_jobs, "Write one `dpsim run` command per point to FILE; run nothing");
  cmd->add_option("--merge", a.merge, "Build DIR/summary.{json,csv} from DIR/points/*.json; run nothing");
  cmd->callback([exit_code]() { *exit_code = run_sweep(a); });
}

}  // namespace sim::cli
