#include "sim/study/capacity.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/study/executor.h"

namespace sim::study {

namespace {

constexpr int kMaxCapacityRuns = 40;  // a bound on the child runs of one search

class CapacitySearch {
 public:
  CapacitySearch(const CapacitySpec& spec, std::string tmp_dir, const Console& console)
      : spec_(spec), tmp_dir_(std::move(tmp_dir)), console_(console), ex_(1, console) {
    ex_.shield_interrupts();
  }

  // Runs one point (memoised); returns whether it meets the SLO (false with error() set on failure).
  bool meets(double aps) {
    auto it = points_.find(aps);
    if (it != points_.end()) return it->second["meets_slo"].get<bool>();
    if (static_cast<int>(points_.size()) >= kMaxCapacityRuns) {
      error_ = fmt::format("gave up after {} runs", kMaxCapacityRuns);
      return false;
    }
    const std::string out = fmt::format("{}/point-{}.json", tmp_dir_, points_.size());
    ChildJob job{"", {self_exe(), "run", spec_.scenario, "--quiet", "--out", out}, "", out, ""};
    for (const auto& s : spec_.sets) job.args.insert(job.args.end(), {"--set", s});
    job.args.insert(job.args.end(), {"--set", fmt::format("workload.aps={:.17g}", aps), "--set",
                                     "sim.progress=false", "--set", kNoTimeline, "--set", kNoRequests});
    const std::string cmd = shell_line(job.args);
    if (ex_.run({job}, OnEnd())[0].code != 0) {
      error_ = "a run failed: " + cmd;
      return false;
    }
    const nlohmann::json r = read_json_file(out);
    std::filesystem::remove(out);
    if (r.is_discarded() || !r.contains("summary")) {
      error_ = "cannot read the results of " + cmd;
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
    console_.out(
        fmt::format("aps {:<10.4g} TTFT p50 {:8.3f} s  p99 {:8.3f} s   TPOT p50 {:7.2f} ms  p99 {:7.2f} ms   "
                    "{:<8} ({})\n",
                    aps, s["ttft_s"]["p50"].get<double>(), s["ttft_s"]["p99"].get<double>(),
                    1e3 * s["tpot_s"]["p50"].get<double>(), 1e3 * s["tpot_s"]["p99"].get<double>(),
                    s["meets_slo"].get<bool>() ? "meets" : "violates", s["stopped_by"].get<std::string>()));
    points_[aps] = p;
    return s["meets_slo"].get<bool>();
  }

  const std::string& error() const { return error_; }
  const std::map<double, nlohmann::json>& points() const { return points_; }

 private:
  const CapacitySpec& spec_;
  std::string tmp_dir_;
  const Console& console_;
  Executor ex_;
  std::map<double, nlohmann::json> points_;  // aps -> point
  std::string error_;
};

// The capacity found by the search of the header (null: none in [lo, hi]).
nlohmann::json search(const CapacitySpec& a, CapacitySearch& s, const Console& console) {
  double lo = a.lo, hi = a.hi;
  if (!s.meets(lo)) {
    if (s.error().empty())
      console.err(fmt::format("dpsim: capacity: even --lo {:g} violates the SLO; lower --lo\n", a.lo));
    return nullptr;
  }
  if (s.meets(hi)) {
    console.err(
        fmt::format("dpsim: capacity: --hi {:g} meets the SLO; the capacity is at least that\n", a.hi));
    return hi;
  }
  if (!s.error().empty()) return nullptr;
  while (hi > lo * (1 + a.tolerance) && s.error().empty()) {
    const double mid = 0.5 * (lo + hi);
    (s.meets(mid) ? lo : hi) = mid;
  }
  // Confirm the step above the capacity (see the header).
  while (s.error().empty()) {
    const double up = lo * (1 + a.tolerance);
    if (std::abs(up - hi) <= 1e-12 * hi) break;  // hi itself: measured, violates
    if (!s.meets(up)) break;
    lo = up;
    hi = std::max(hi, lo);
  }
  return s.error().empty() ? nlohmann::json(lo) : nlohmann::json();
}

}  // namespace

StatusOr<Outcome> run_capacity(const CapacitySpec& a, const Console& console) {
  auto sc = config::load_scenario(a.scenario, a.sets);
  if (!sc) return sc.status();
  std::string bad;
  if (sc->workload.mode != "online") bad = "the scenario's workload.mode must be \"online\"";
  if (!(a.lo > 0 && a.hi > a.lo))
    bad = fmt::format("expected 0 < --lo < --hi, got {:g} and {:g}", a.lo, a.hi);
  if (!(a.tolerance > 0 && a.tolerance < 1))
    bad = fmt::format("expected --tolerance in (0, 1), got {:g}", a.tolerance);
  if (!bad.empty()) return Status::error(fmt::format("capacity {}: {}", a.scenario, bad));
  const std::string path = a.out.empty() ? "out/capacity-" + sc->name + ".json" : a.out;
  std::error_code ec;
  const auto dir = std::filesystem::absolute(path, ec).parent_path();
  std::filesystem::create_directories(dir, ec);
  const std::string tmp_dir = (dir / fmt::format(".capacity-{}", ::getpid())).string();
  std::filesystem::create_directories(tmp_dir, ec);
  CapacitySearch s(a, tmp_dir, console);
  const nlohmann::json capacity = search(a, s, console);
  std::filesystem::remove_all(tmp_dir, ec);
  if (!s.error().empty()) return Status::error("capacity: " + s.error());
  nlohmann::json j = {
      {"kind", "capacity"},
      {"scenario", sc->name},
      {"scenario_file", a.scenario},
      {"sets", a.sets},
      {"slo", {{"ttft_s", sc->slo.ttft_s}, {"tpot_s", sc->slo.tpot_s}, {"statistic", sc->slo.statistic}}},
      {"capacity_aps", capacity},
      {"tolerance", a.tolerance},
      {"points", nlohmann::json::array()}};
  for (const auto& [aps, p] : s.points()) j["points"].push_back(p);
  const std::string err = write_file_atomically(path, j.dump(1) + "\n");
  if (!err.empty()) return Status::error(err);
  std::string t = capacity.is_null() ? fmt::format("capacity: none in [{:g}, {:g}]\n", a.lo, a.hi)
                                     : fmt::format("capacity: {:.4g} agents/s (tolerance {:g})\n",
                                                   capacity.get<double>(), a.tolerance);
  return Outcome{t + fmt::format("results: {}\n", path)};
}

}  // namespace sim::study
