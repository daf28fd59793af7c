// `dpsim capacity SCENARIO [--lo X] [--hi Y] [--tolerance T] [--set k=v]... [--out FILE]`: the largest
// agent arrival rate (workload.aps, agents/s) at which an online scenario meets its SLO (summary.meets_slo
// of `dpsim run`: see scenarios/README.md, "slo").
//
// Search (each point is a child `dpsim run`, since SimGrid runs one simulation per process):
//   1. run lo and hi; lo must meet the SLO (else there is no capacity: capacity_aps null) and hi must not
//      (else the capacity is at least hi: capacity_aps = hi, and a warning says to raise --hi);
//   2. bisect: mid = (lo + hi) / 2 replaces lo when it meets the SLO, hi otherwise, until
//      hi <= lo (1 + tolerance);
//   3. confirm: run lo (1 + tolerance) unless it is hi; while it meets the SLO (the SLO boundary need
//      not be monotone in a seeded run), it becomes lo and the next step up is tried.
// So the reported capacity C meets the SLO and C (1 + tolerance) does not, both measured.
// Output JSON: {"kind": "capacity", "scenario", "slo": {"ttft_s", "tpot_s", "statistic"}, "capacity_aps",
// "tolerance", "points": [{"aps", "meets_slo", "stopped_by", "ttft_s", "tpot_s", "ttft_breakdown_s"}]}
// with points sorted by aps (what analysis/dpsim_plots reads).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "sim/study/executor.h"
#include "sim/cli/commands.h"
#include "sim/config/scenario.h"
#include "sim/core/paths.h"

namespace sim::cli {

using namespace study;  // the studies moved to sim/study/; the commands are made thin next

namespace {

constexpr int kMaxRuns = 40;  // a bound on the child runs of one search

struct Search {
  std::string scenario;
  std::vector<std::string> sets;
  std::string tmp_dir;
  std::map<double, nlohmann::json> points;  // aps -> point
  std::string error;

  // Runs one point (memoised); returns whether it meets the SLO (false with `error` set on failure).
  bool meets(double aps) {
    auto it = points.find(aps);
    if (it != points.end()) return it->second["meets_slo"].get<bool>();
    if (static_cast<int>(points.size()) >= kMaxRuns) {
      error = fmt::format("gave up after {} runs", kMaxRuns);
      return false;
    }
    const std::string out = fmt::format("{}/point-{}.json", tmp_dir, points.size());
    std::string cmd =
        shell_quote(self_exe()) + " run " + shell_quote(scenario) + " --quiet --out " + shell_quote(out);
    for (const auto& s : sets) cmd += " --set " + shell_quote(s);
    cmd += " --set " + shell_quote(fmt::format("workload.aps={:.17g}", aps)) + " --set sim.progress=false" +
           " --set " + kNoTimeline + " --set " + kNoRequests;
    if (std::system(cmd.c_str()) != 0) {
      error = "a run failed: " + cmd;
      return false;
    }
    std::ifstream in(out);
    const nlohmann::json r = nlohmann::json::parse(in, nullptr, false);
    std::filesystem::remove(out);
    if (r.is_discarded() || !r.contains("summary")) {
      error = "cannot read the results of " + cmd;
      return false;
    }
    const auto& s = r["summary"];
    nlohmann::json p = {{"aps", aps},
                        {"meets_slo", s["meets_slo"]},
                        {"stopped_by", s["stopped_by"]},
                        {"slo_attainment", s["slo_attainment"]},
                        {"ttft_s", s["ttft_s"]},
                        {"tpot_s", s["tpot_s"]},
                        {"ttft_breakdown_s", s["ttft_breakdown_s"]}};
    std::printf("aps %-10.4g TTFT p50 %8.3f s  p99 %8.3f s   TPOT p50 %7.2f ms  p99 %7.2f ms   %-8s (%s)\n",
                aps, s["ttft_s"]["p50"].get<double>(), s["ttft_s"]["p99"].get<double>(),
                1e3 * s["tpot_s"]["p50"].get<double>(), 1e3 * s["tpot_s"]["p99"].get<double>(),
                s["meets_slo"].get<bool>() ? "meets" : "violates",
                s["stopped_by"].get<std::string>().c_str());
    std::fflush(stdout);
    points[aps] = p;
    return s["meets_slo"].get<bool>();
  }
};

}  // namespace

void add_capacity_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("capacity", "Largest workload.aps meeting the SLO (online scenario)");
  static std::string scenario, out;
  static std::vector<std::string> sets;
  static double lo = 0.05, hi = 2.0, tolerance = 0.05;
  cmd->add_option("scenario", scenario, "Scenario JSON file (workload.mode online)")->required();
  cmd->add_option("--lo", lo, "Lowest APS tried (agents/s)")->capture_default_str();
  cmd->add_option("--hi", hi, "Highest APS tried (agents/s)")->capture_default_str();
  cmd->add_option("--tolerance", tolerance, "Relative width of the final bracket")->capture_default_str();
  cmd->add_option("--set", sets, "Override a field for every run: key.path=value (repeatable)");
  cmd->add_option("--out", out, "Capacity JSON path (default out/capacity-<name>.json)");
  cmd->callback([exit_code]() {
    auto sc = load_scenario_or_report(scenario, sets, exit_code);
    if (!sc) return;
    std::string bad;
    if (sc->workload.mode != "online") bad = "the scenario's workload.mode must be \"online\"";
    if (!(lo > 0 && hi > lo)) bad = fmt::format("expected 0 < --lo < --hi, got {:g} and {:g}", lo, hi);
    if (!(tolerance > 0 && tolerance < 1))
      bad = fmt::format("expected --tolerance in (0, 1), got {:g}", tolerance);
    if (!bad.empty()) {
      std::fprintf(stderr, "dpsim: capacity %s: %s\n", scenario.c_str(), bad.c_str());
      *exit_code = 2;
      return;
    }
    Search s{scenario, sets, "", {}, ""};
    const std::string path = out.empty() ? "out/capacity-" + sc->name + ".json" : out;
    std::error_code ec;
    const auto dir = std::filesystem::absolute(path, ec).parent_path();
    std::filesystem::create_directories(dir, ec);
    s.tmp_dir = (dir / fmt::format(".capacity-{}", ::getpid())).string();
    std::filesystem::create_directories(s.tmp_dir, ec);

    nlohmann::json capacity;  // null: none found
    double a = lo, b = hi;
    if (!s.meets(a)) {
      if (s.error.empty())
        std::fprintf(stderr, "dpsim: capacity: even --lo %g violates the SLO; lower --lo\n", lo);
    } else if (s.meets(b)) {
      std::fprintf(stderr, "dpsim: capacity: --hi %g meets the SLO; the capacity is at least that\n", hi);
      capacity = b;
    } else if (s.error.empty()) {
      while (b > a * (1 + tolerance) && s.error.empty()) {
        const double mid = 0.5 * (a + b);
        (s.meets(mid) ? a : b) = mid;
      }
      // Confirm the step above the capacity (see the header).
      while (s.error.empty()) {
        const double up = a * (1 + tolerance);
        if (std::abs(up - b) <= 1e-12 * b) break;  // hi itself: measured, violates
        if (!s.meets(up)) break;
        a = up;
        b = std::max(b, a);
      }
      if (s.error.empty()) capacity = a;
    }
    std::filesystem::remove_all(s.tmp_dir, ec);
    if (!s.error.empty()) {
      std::fprintf(stderr, "dpsim: capacity: %s\n", s.error.c_str());
      *exit_code = 2;
      return;
    }
    nlohmann::json j = {
        {"kind", "capacity"},
        {"scenario", sc->name},
        {"scenario_file", scenario},
        {"sets", sets},
        {"slo", {{"ttft_s", sc->slo.ttft_s}, {"tpot_s", sc->slo.tpot_s}, {"statistic", sc->slo.statistic}}},
        {"capacity_aps", capacity},
        {"tolerance", tolerance},
        {"points", nlohmann::json::array()}};
    for (const auto& [aps, p] : s.points) j["points"].push_back(p);
    const std::string err = write_file_atomically(path, j.dump(1) + "\n");
    if (!err.empty()) {
      std::fprintf(stderr, "dpsim: %s\n", err.c_str());
      *exit_code = 2;
      return;
    }
    if (capacity.is_null())
      std::printf("capacity: none in [%g, %g]\n", lo, hi);
    else
      std::printf("capacity: %.4g agents/s (tolerance %g)\n", capacity.get<double>(), tolerance);
    std::printf("results: %s\n", path.c_str());
  });
}

}  // namespace sim::cli
