#include "sim/study/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "sim/config/json_util.h"
#include "sim/core/paths.h"
#include "sim/study/calibrate_report.h"
#include "sim/study/executor.h"
#include "sim/study/linear_algebra.h"

namespace sim::study {

namespace {

namespace fs = std::filesystem;
using Vec = std::vector<double>;

// What the runs depend on; a DIR made for another file to fit or other keys is refused, and so is a point of
// the same name with another scenario or other sets.
nlohmann::json manifest_of(const CalibrationSpec& spec) {
  nlohmann::json m = {
      {"kind", "calibrate-manifest"},          {"target_kind", spec.target_kind},
      {"target_file", spec.target_file},       {"target", nlohmann::json::parse(spec.target.dump())},
      {"parameters", nlohmann::json::array()}, {"points", nlohmann::json::object()}};
  for (const auto& p : spec.parameters) m["parameters"].push_back(p.key);
  for (const auto& p : spec.points) m["points"][p.name] = {{"scenario", p.scenario}, {"sets", p.sets}};
  return m;
}

StatusOr<nlohmann::json> merged_manifest(const nlohmann::json& now, const std::string& path) {
  StatusOr<nlohmann::json> old = config::read_json_file(path);
  if (!old) return now;  // none yet
  const std::string refuse = fmt::format("{} holds the runs of another calibration", path);
  for (const char* k : {"kind", "target_kind", "target_file", "target", "parameters"})
    if (old->value(k, nlohmann::json()) != now[k])
      return Status::error(fmt::format("{} ({} differs); give another --out or remove it", refuse, k));
  nlohmann::json merged = *old;
  if (!merged["points"].is_object()) merged["points"] = nlohmann::json::object();
  for (const auto& [name, p] : now["points"].items()) {
    if (merged["points"].contains(name) && merged["points"][name] != p)
      return Status::error(
          fmt::format("{} (point {} had another scenario or other sets); give another --out or "
                      "rename the point",
                      refuse, name));
    merged["points"][name] = p;
  }
  return merged;
}

class Study {
 public:
  Study(const CalibrationSpec& spec, const CalibrateOptions& o, const RunBatch& run)
      : spec_(spec), o_(o), run_(run), dir_(absolute_path(o.out_dir)) {}

  StatusOr<Calibration> go() {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t n = spec_.parameters.size(), m = spec_.points.size();
    const int first = static_cast<int>((n + 1) * m);
    if (o_.max_runs < first)
      return Status::error(
          fmt::format("--max-runs: expected at least {} (the search's first batch: {} candidates x "
                      "{} points), got {}",
                      first, n + 1, m, o_.max_runs));
    if (!(o_.step_tol > 0 && o_.step_tol <= 0.1))
      return Status::error(
          fmt::format("--step-tol: expected a share of each range in (0, 0.1], got {}", o_.step_tol));
    const std::string mpath = dir_ + "/calibrate-manifest.json";
    StatusOr<nlohmann::json> manifest = merged_manifest(manifest_of(spec_), mpath);
    if (!manifest) return manifest.status();
    if (const std::string err = write_file_atomically(mpath, manifest->dump(1) + "\n"); !err.empty())
      return Status::error(err);

    FitProblem problem;
    for (const auto& p : spec_.parameters) {
      problem.lower.push_back(p.lower);
      problem.upper.push_back(p.upper);
      problem.start.push_back(p.start);
    }
    FitOptions fo;
    fo.max_evaluations = o_.max_runs / static_cast<int>(m);
    fo.step_tol = o_.step_tol;
    const FitResult fit =
        fit_least_squares(problem, fo, [this](const std::vector<Vec>& b) { return evaluate(b); });
    if (!error_.is_ok()) return error_;

    Calibration c;
    c.stop = fit.stop;
    c.candidates = static_cast<int>(fit.evaluations.size());
    c.runs = c.candidates * static_cast<int>(m);
    c.runs_now = runs_now_;
    c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (fit.stop == FitStop::kStopped || !fit.best) {
      c.outcome = paused_ > 0 ? CalibrationOutcome::kPaused : CalibrationOutcome::kRunFailed;
      c.message = paused_ > 0 ? fmt::format("{} runs of the next batch handed out", paused_) : failure_;
      return c;
    }
    const FitEvaluation& best = fit.evaluations[*fit.best];
    c.values = best.x;
    bool all = true;
    for (size_t i = 0; i < m; ++i) {
      const MeasuredPoint& p = spec_.points[i];
      PointFit f;
      f.name = p.name;
      f.quantity = p.quantity;
      f.measured = p.measured;
      f.simulated = simulated_.at(candidate_name(best.x))[i];
      f.rel_error = (f.simulated - p.measured) / p.measured;
      f.tolerance = p.tolerance;
      f.within = std::fabs(f.rel_error) <= p.tolerance;
      f.result = "points/" + p.name + "@" + candidate_name(best.x) + ".json";
      all = all && f.within;
      c.points.push_back(f);
    }
    c.outcome = all ? CalibrationOutcome::kFitted : CalibrationOutcome::kNotFitted;
    c.objective = best.objective;
    c.history = fit.evaluations;
    describe(fit, &c);
    c.calibration_file = dir_ + "/calibration.json";
    c.calibrated_file = dir_ + "/" + spec_.target_name + "-calibrated.json";
    SIM_RETURN_IF_ERROR(write_calibration(spec_, o_, c));
    c.report = calibration_report(spec_, o_, c);
    return c;
  }

 private:
  // A candidate's copy of the file to fit: DIR/engine/<candidate>.json or DIR/hardware/<candidate>.json.
  std::string candidate_path(const std::string& cand) const {
    return dir_ + "/" + spec_.target_kind + "/" + cand + ".json";
  }
  std::string run_name(const MeasuredPoint& p, const std::string& cand) const { return p.name + "@" + cand; }

  CalibrationRun run_of(const MeasuredPoint& p, const std::string& cand) const {
    CalibrationRun r;
    r.name = run_name(p, cand);
    r.result = dir_ + "/points/" + r.name + ".json";
    r.log = dir_ + "/points/" + r.name + ".log";
    r.args = {"run", p.scenario, "--quiet", "--out", r.result, "--set", "sim.progress=false"};
    for (const auto& s : p.sets) r.args.insert(r.args.end(), {"--set", s});
    for (const auto& f : p.target_fields)
      r.args.insert(r.args.end(), {"--set", f + "=" + candidate_path(cand)});
    return r;
  }

  // The search's evaluator: writes each candidate's copy of the file, runs the points without a complete
  // result, and reads the quantities. nullopt (and error_, failure_ or paused_ set) stops the search.
  std::optional<std::vector<Residuals>> evaluate(const std::vector<Vec>& batch) {
    std::vector<CalibrationRun> todo;
    for (const Vec& x : batch) {
      const std::string cand = candidate_name(x);
      const std::string err =
          write_file_atomically(candidate_path(cand), target_with(spec_, x).dump(2) + "\n");
      if (!err.empty()) {
        error_ = Status::error(err);
        return std::nullopt;
      }
      for (const auto& p : spec_.points) {
        CalibrationRun r = run_of(p, cand);
        if (!result_file_complete(r.result)) todo.push_back(r);
      }
    }
    if (!todo.empty()) {
      std::error_code ec;
      fs::create_directories(dir_ + "/points", ec);
      const std::optional<std::vector<int>> codes = run_(todo);
      if (!codes) {
        paused_ = static_cast<int>(todo.size());
        return std::nullopt;
      }
      runs_now_ += static_cast<int>(todo.size());
      for (size_t i = 0; i < todo.size(); ++i)
        if ((*codes)[i] != 0 || !result_file_complete(todo[i].result)) {
          failure_ =
              fmt::format("run {} failed (exit {}); its log: {}", todo[i].name, (*codes)[i], todo[i].log);
          return std::nullopt;
        }
    }
    std::vector<Residuals> out;
    for (const Vec& x : batch) {
      const std::string cand = candidate_name(x);
      Residuals r;
      Vec sim;
      for (const auto& p : spec_.points) {
        const std::string path = run_of(p, cand).result;
        const StatusOr<nlohmann::json> j = config::read_json_file(path);
        const std::optional<double> v = j ? number_at(*j, p.quantity) : std::nullopt;
        if (!v) {
          failure_ = fmt::format("{}: expected a number at {}", path, p.quantity);
          return std::nullopt;
        }
        sim.push_back(*v);
        r.push_back(std::sqrt(p.weight) * (*v - p.measured) / p.measured);
      }
      simulated_[cand] = sim;
      out.push_back(r);
    }
    return out;
  }

  // The sensitivities, scatter and spread of the fit, as Calibration reports them. The search's residuals are
  // the relative errors times sqrt(weight): the scatter and the sensitivities are reported per point without
  // it, the spread (of the values) and the condition number are the weighted fit's.
  void describe(const FitResult& fit, Calibration* c) const {
    c->scatter = fit.scatter;
    for (size_t i = 0; i < c->scatter.size() && i < spec_.points.size(); ++i)
      c->scatter[i] /= std::sqrt(spec_.points[i].weight);
    c->spread = fit.spread;
    if (fit.jacobian.empty()) return;
    std::vector<Vec> a = fit.jacobian;  // per share of each range
    for (size_t i = 0; i < c->points.size(); ++i) {
      c->elasticity.emplace_back();
      const double unweight = 1 / std::sqrt(spec_.points[i].weight);
      for (size_t j = 0; j < c->values.size(); ++j) {
        const PointFit& f = c->points[i];
        c->elasticity.back().push_back(f.measured * fit.jacobian[i][j] * unweight * c->values[j] /
                                       f.simulated);
        a[i][j] *= spec_.parameters[j].upper - spec_.parameters[j].lower;
      }
    }
    const Vec sv = singular_values(a);
    if (!sv.empty() && sv.back() > 1e-12 * sv.front()) c->condition = sv.front() / sv.back();
  }

  const CalibrationSpec& spec_;
  const CalibrateOptions& o_;
  const RunBatch& run_;
  const std::string dir_;
  Status error_;
  std::string failure_;
  int paused_ = 0, runs_now_ = 0;
  std::map<std::string, Vec> simulated_;  // by candidate name: each point's quantity
};

}  // namespace

std::string candidate_name(const std::vector<double>& values) {
  std::string s;
  for (double v : values) s += (s.empty() ? "" : "_") + fmt::format("{}", v);
  return s;
}

StatusOr<Calibration> calibrate(const CalibrationSpec& spec, const CalibrateOptions& options,
                                const RunBatch& run) {
  return Study(spec, options, run).go();
}

StatusOr<Outcome> run_calibrate(const CalibrateCommand& a, const Console& console) {
  auto fail = [](const std::string& msg) { return Status::error("calibrate: " + msg); };
  if (a.spec.empty()) return fail("expected a SPEC (a calibration spec JSON)");
  const StatusOr<CalibrationSpec> spec = load_calibration_spec(a.spec);
  if (!spec) return fail(spec.status().message());
  CalibrateOptions o;
  o.out_dir = a.out.empty() ? "out/calibrate-" + spec->name : a.out;
  o.max_runs = a.max_runs;
  o.step_tol = a.step_tol;
  std::vector<std::string> cmd = {"dpsim", "calibrate", a.spec, "--out", o.out_dir};
  if (a.max_runs != CalibrateCommand{}.max_runs)
    cmd.insert(cmd.end(), {"--max-runs", std::to_string(a.max_runs)});
  if (a.step_tol != CalibrateCommand{}.step_tol)
    cmd.insert(cmd.end(), {"--step-tol", fmt::format("{}", a.step_tol)});
  o.command = shell_line(cmd);

  const Executor ex(a.jobs, console);
  const std::string exe = self_exe();
  Status emit_error;
  const RunBatch run = [&](const std::vector<CalibrationRun>& batch) -> std::optional<std::vector<int>> {
    std::vector<ChildJob> jobs;
    for (const auto& r : batch) {
      ChildJob job{r.name, {exe}, r.log, r.result, ""};
      job.args.insert(job.args.end(), r.args.begin(), r.args.end());
      job.args.insert(job.args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
      jobs.push_back(std::move(job));
    }
    if (!a.emit_jobs.empty()) {
      emit_error = ex.emit(a.emit_jobs, jobs);
      return std::nullopt;
    }
    console.err(fmt::format("calibrate: batch of {} runs, {} at a time\n", batch.size(), ex.jobs()));
    std::vector<int> codes;
    for (const ChildEnd& e : ex.run(jobs)) codes.push_back(e.code);
    return codes;
  };
  const StatusOr<Calibration> c = calibrate(*spec, o, run);
  if (!c) return fail(c.status().message());
  if (!emit_error.is_ok()) return fail(emit_error.message());
  switch (c->outcome) {
    case CalibrationOutcome::kPaused:
      return Outcome{
          fmt::format("{}: {} (run them, then run this dpsim calibrate again)\n", c->message, a.emit_jobs)};
    case CalibrationOutcome::kRunFailed:
      console.err("dpsim: calibrate: " + c->message + "\n");
      return Outcome{"", Verdict::kFail};
    case CalibrationOutcome::kFitted:
    case CalibrationOutcome::kNotFitted:
      break;
  }
  return Outcome{c->report, c->outcome == CalibrationOutcome::kFitted ? Verdict::kPass : Verdict::kFail};
}

}  // namespace sim::study
