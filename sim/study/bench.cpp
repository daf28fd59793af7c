#include "sim/study/bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/core/paths.h"
#include "sim/study/executor.h"

namespace sim::study {

namespace fs = std::filesystem;

namespace {

// The scenario files of the inputs: a directory stands for its *.json files, in name order.
std::vector<std::string> expand(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    const std::string p = resolve_path(in, "");
    if (fs::is_directory(p)) {
      std::vector<std::string> dir;
      for (const auto& e : fs::directory_iterator(p))
        if (e.path().extension() == ".json") dir.push_back(e.path().string());
      std::sort(dir.begin(), dir.end());
      files.insert(files.end(), dir.begin(), dir.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

}  // namespace

StatusOr<Outcome> run_bench(const BenchSpec& spec, const Console& console) {
  const Executor ex(1, console);
  const std::string self = self_exe();
  nlohmann::json report = nlohmann::json::array();
  const std::vector<std::string> files = expand(spec.inputs);
  std::string base = spec.base;
  if (base.empty() && !files.empty()) base = fs::path(files.front()).stem().string();
  bool has_base = false;
  for (const auto& f : files) has_base = has_base || fs::path(f).stem().string() == base;
  if (!has_base)
    return Status::error(fmt::format("bench: --base {}: no such scenario among the inputs", base));
  console.out(fmt::format("{:<36} {:>8} {:>8} {:>9} {:>8} {:>7} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9}\n",
                          "scenario", "wall s", "CPU s", "turns", "us/turn", "x base", "x real", "act/turn",
                          "peak act", "xfer/turn", "RSS MiB", "JCT s"));
  // The base first, so that every row can give its ratio as it is measured.
  std::vector<std::string> order = files;
  std::stable_partition(order.begin(), order.end(),
                        [&](const std::string& f) { return fs::path(f).stem().string() == base; });
  double base_us = 0;
  for (const auto& file : order) {
    const std::string res = "out/bench/" + fs::path(file).stem().string() + ".json";
    ChildJob job{
        file, {self, "run", file, "--quiet", "--out", res, "--set", "sim.progress=false"}, "", res, ""};
    for (const auto& s : spec.sets) job.args.insert(job.args.end(), {"--set", s});
    job.args.insert(job.args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
    const ChildEnd c = ex.run({job}, OnEnd())[0];
    if (c.code != 0) return Status::error(fmt::format("bench: {} failed (status {})", file, c.status));
    std::ifstream in(res);
    const nlohmann::json r = nlohmann::json::parse(in);
    const auto& ri = r["run_info"];
    const double turns = r["summary"]["turns_completed"].get<double>();
    const double wall = ri["wall_s"].get<double>();
    const double per_turn = turns > 0 ? ri["activities"].get<double>() / turns : 0;
    const double us_per_turn = turns > 0 ? 1e6 * wall / turns : 0;
    if (base_us <= 0) base_us = us_per_turn;
    const double jct = r["summary"]["jct_s"].get<double>();
    report.push_back({{"scenario", file},
                      {"wall_s", wall},
                      {"cpu_s", c.cpu_s},
                      {"turns", r["summary"]["turns_completed"]},
                      {"turns_per_wall_s", ri["turns_per_wall_s"]},
                      {"wall_us_per_turn", us_per_turn},
                      {"us_per_turn_vs_base", base_us > 0 ? us_per_turn / base_us : 0},
                      {"real_time_factor", wall > 0 ? jct / wall : 0},
                      {"transfers", ri.value("transfers", 0.0)},
                      {"transfer_polls", ri.value("transfer_polls", 0.0)},
                      {"peak_transfers_in_flight", ri["peak_transfers_in_flight"]},
                      {"sim_s_per_wall_s", ri["sim_s_per_wall_s"]},
                      {"activities_per_turn", per_turn},
                      {"activities_per_wall_s", ri["activities_per_wall_s"]},
                      {"peak_activities_in_flight", ri["peak_activities_in_flight"]},
                      {"peak_rss_bytes", c.max_rss_bytes},
                      {"jct_s", r["summary"]["jct_s"]}});
    console.out(fmt::format(
        "{:<36} {:8.1f} {:8.1f} {:9.0f} {:8.1f} {:7.2f} {:8.0f} {:8.2f} {:8} {:9.2f} {:8.0f} {:9.1f}\n",
        fs::path(file).stem().string(), wall, c.cpu_s, turns, us_per_turn,
        base_us > 0 ? us_per_turn / base_us : 0, wall > 0 ? jct / wall : 0, per_turn,
        static_cast<long long>(ri["peak_activities_in_flight"].get<int64_t>()),
        turns > 0 ? ri.value("transfers", 0.0) / turns : 0, c.max_rss_bytes / 1048576.0, jct));
  }
  const std::string err = write_file_atomically(spec.out, report.dump(1) + "\n");
  if (!err.empty()) return Status::error(err);
  return Outcome{fmt::format("benchmark: {}\n", spec.out)};
}

}  // namespace sim::study
