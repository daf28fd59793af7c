// Unit tests of the calibration study (sim/study/calibrate.h) without simulations: its runs are answered by
// a stand-in that reads the candidate's engine copy and writes a results file whose JCT is a known
// function of it. Checks the fit, the files, the resume, "not fitted", a failed run, --emit-jobs and a
// folder made for other runs.
#include "sim/study/calibrate.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>

#include "sim/config/json_util.h"
#include "tests/unit/config/config_fixtures.h"

using Catch::Matchers::Contains;
using sim::config::testing::error_of;
using sim::config::testing::ScratchDir;
using sim::study::calibrate;
using sim::study::CalibrateOptions;
using sim::study::CalibrationOutcome;
using sim::study::CalibrationRun;
using sim::study::RunBatch;

namespace {

const std::string kScenario = std::string(DPSIM_SOURCE_DIR) + "/tests/e2e/cases/io_1p1d.json";

// A spec fitting the storage client's efficiency (the engine's storage.efficiency) in [0.3, 1] to JCTs
// measured on io_1p1d.json.
sim::study::CalibrationSpec spec_of(const ScratchDir& d, const std::vector<double>& measured,
                                    const std::string& key = "storage.efficiency",
                                    const std::vector<double>& weights = {}) {
  std::string points;
  for (size_t i = 0; i < measured.size(); ++i)
    points += (i ? "," : "") + std::string("{\"name\": \"p") + std::to_string(i) + "\", \"scenario\": \"" +
              kScenario +
              "\", \"quantity\": \"summary.jct_s\", \"measured\": " + std::to_string(measured[i]) +
              ", \"tolerance\": 0.01" +
              (i < weights.size() ? ", \"weight\": " + std::to_string(weights[i]) : std::string()) + "}";
  const std::string text = "{\"engine\": \"" + std::string(DPSIM_SOURCE_DIR) +
                           "/tests/e2e/cases/e2e-io-engine.json\", \"parameters\": [{\"key\": \"" + key +
                           "\", \"lower\": 0.3, \"upper\": 1}], \"points\": [" + points + "]}";
  auto s = sim::study::load_calibration_spec(d.write("spec.json", text));
  INFO(error_of(s));
  REQUIRE(s);
  return *s;
}

// The stand-in for `dpsim run`: JCT = 2 / storage.efficiency of the engine copy the run is given.
struct FakeRuns {
  int runs = 0;
  std::vector<int> batches;
  RunBatch batch() {
    return [this](const std::vector<CalibrationRun>& list) -> std::optional<std::vector<int>> {
      batches.push_back(static_cast<int>(list.size()));
      for (const auto& r : list) {
        std::string engine;
        for (size_t k = 0; k + 1 < r.args.size(); ++k)
          if (r.args[k] == "--set" && r.args[k + 1].rfind("engine=", 0) == 0)
            engine = r.args[k + 1].substr(7);
        const auto doc = sim::config::read_json_file(engine);
        REQUIRE(doc);
        const double eff = (*doc)["storage"]["efficiency"].get<double>();
        const nlohmann::json result = {{"summary", {{"jct_s", 2 / eff}}},
                                       {"resources", nlohmann::json::array()}};
        std::ofstream(r.result) << result.dump();
        ++runs;
      }
      return std::vector<int>(list.size(), 0);
    };
  }
};

CalibrateOptions options_in(const ScratchDir& d) {
  CalibrateOptions o;
  o.out_dir = d.path("out");
  o.command = "dpsim calibrate spec.json";
  return o;
}

}  // namespace

TEST_CASE(
    "Calibrate: a measurement made at a known value -> that value, the files, and a rerun that runs nothing",
    "[unit][calibrate]") {
  ScratchDir d;
  const auto spec = spec_of(d, {2 / 0.6});
  FakeRuns fake;
  const auto c = calibrate(spec, options_in(d), fake.batch());
  INFO(error_of(c));
  REQUIRE(c);
  CHECK(c->outcome == CalibrationOutcome::kFitted);
  REQUIRE(c->values.size() == 1);
  CHECK(c->values[0] == Approx(0.6).epsilon(1e-3));
  CHECK(c->points.at(0).within);
  CHECK(c->runs == fake.runs);
  CHECK(fake.batches.at(0) == 2);  // the first batch: n + 1 candidates at once
  CHECK_THAT(c->report, Contains("fitted: every point is within its tolerance"));

  const auto j = sim::config::read_json_file(c->calibration_file);
  REQUIRE(j);
  CHECK((*j)["fitted"] == true);
  CHECK((*j)["parameters"][0]["value"] == c->values[0]);
  CHECK((*j)["parameters"][0]["was"] == 1.0);  // e2e-io-engine.json's storage.efficiency
  CHECK((*j)["target_kind"] == "engine");
  CHECK((*j)["history"].size() == static_cast<size_t>(c->candidates));
  const auto fitted = sim::config::read_json_file(c->calibrated_file);
  REQUIRE(fitted);
  CHECK(std::filesystem::path(c->calibrated_file).filename() == "e2e-io-engine-calibrated.json");
  CHECK((*fitted)["name"] == "e2e-io-engine-calibrated");
  CHECK((*fitted)["storage"]["efficiency"] == c->values[0]);
  CHECK_THAT((*fitted)["sources"]["storage.efficiency"].get<std::string>(),
             Contains("CALIBRATION: ") && Contains("by dpsim calibrate in [") &&
                 Contains("p0 summary.jct_s measured") && Contains("Command: dpsim calibrate spec.json"));
  // The point's result and the candidate's engine copy are named from the values.
  CHECK(std::filesystem::exists(d.path("out/points/p0@" + sim::study::candidate_name(c->values) + ".json")));
  CHECK(std::filesystem::exists(d.path("out/engine/" + sim::study::candidate_name(c->values) + ".json")));

  // Rerun: the same search over the stored results, nothing run.
  FakeRuns again;
  const auto c2 = calibrate(spec, options_in(d), again.batch());
  REQUIRE(c2);
  CHECK(again.runs == 0);
  CHECK(c2->runs_now == 0);
  CHECK(c2->values == c->values);
}

TEST_CASE("Calibrate: two measurements that contradict -> residuals reported, not fitted, files written",
          "[unit][calibrate]") {
  ScratchDir d;
  const auto spec = spec_of(d, {2 / 0.5, 2 / 0.7});  // JCT 4 and 2.857 for one and the same run
  FakeRuns fake;
  const auto c = calibrate(spec, options_in(d), fake.batch());
  REQUIRE(c);
  CHECK(c->outcome == CalibrationOutcome::kNotFitted);
  REQUIRE(c->points.size() == 2);
  CHECK(c->points[0].rel_error < -0.01);  // below the larger measurement
  CHECK(c->points[1].rel_error > 0.01);   // above the smaller
  CHECK(!c->points[0].within);
  CHECK(!c->points[1].within);
  CHECK(c->points[0].simulated == c->points[1].simulated);
  CHECK_THAT(c->report, Contains("NOT FITTED: 2 of 2 points outside their tolerance"));
  const auto j = sim::config::read_json_file(c->calibration_file);
  REQUIRE(j);
  CHECK((*j)["fitted"] == false);
  CHECK((*j)["points"][0]["within_tolerance"] == false);
  CHECK(std::filesystem::exists(c->calibrated_file));
}

TEST_CASE("Calibrate: the same contradiction with a weight of 100 on one point -> the fit holds that point",
          "[unit][calibrate]") {
  // JCT = 2 / e; measured 4 (e = 0.5) and 2.857 (e = 0.7). With u = 1 / e the errors are u / 2 - 1 and
  // 0.7 u - 1 (2.857 = 2 / 0.7 to the 4 decimals std::to_string keeps: 0.70000 u - 1 within 1e-6).
  // Unweighted, the least squares of the two are at 0.25 u - 0.5 + 0.49 u - 0.7 = 0: u = 1.6216, e = 0.6167.
  // With the first weighing 100: 25 u - 50 + 0.49 u - 0.7 = 0: u = 1.98901, e = 0.50276, errors -0.55% and
  // +39.2% (reported unweighted).
  ScratchDir d;
  FakeRuns fake;
  const auto plain = calibrate(spec_of(d, {2 / 0.5, 2 / 0.7}), options_in(d), fake.batch());
  REQUIRE(plain);
  CHECK(plain->values[0] == Approx(0.6167).margin(0.002));
  ScratchDir d2;
  const auto c = calibrate(spec_of(d2, {2 / 0.5, 2 / 0.7}, "storage.efficiency", {100, 1}), options_in(d2),
                           fake.batch());
  REQUIRE(c);
  CHECK(c->values[0] == Approx(0.50276).margin(0.002));
  CHECK(c->outcome == CalibrationOutcome::kNotFitted);
  CHECK(c->points[0].within);
  CHECK(!c->points[1].within);
  CHECK(c->points[0].rel_error == Approx(2 / c->values[0] / 4 - 1).margin(1e-9));
  CHECK(c->points[1].rel_error == Approx(2 / c->values[0] / (2 / 0.7) - 1).margin(1e-4));
  CHECK_THAT(c->report, Contains("weight of p0: 100"));
  const auto j = sim::config::read_json_file(c->calibration_file);
  REQUIRE(j);
  CHECK((*j)["points"][0]["weight"] == 100);
  CHECK((*j)["points"][1]["weight"] == 1);
}

TEST_CASE("Calibrate: a run that fails, runs handed out, a folder of other runs, too few runs -> said so",
          "[unit][calibrate]") {
  ScratchDir d;
  const auto spec = spec_of(d, {2 / 0.6});
  const RunBatch failing = [](const std::vector<CalibrationRun>& list) {
    return std::optional<std::vector<int>>(std::vector<int>(list.size(), 2));
  };
  const auto f = calibrate(spec, options_in(d), failing);
  REQUIRE(f);
  CHECK(f->outcome == CalibrationOutcome::kRunFailed);
  CHECK_THAT(f->message, Contains("run p0@0.65 failed (exit 2); its log: ") && Contains("p0@0.65.log"));
  CHECK(!std::filesystem::exists(d.path("out/calibration.json")));

  const RunBatch emit = [](const std::vector<CalibrationRun>&) { return std::optional<std::vector<int>>(); };
  const auto e = calibrate(spec, options_in(d), emit);
  REQUIRE(e);
  CHECK(e->outcome == CalibrationOutcome::kPaused);
  CHECK(e->message == "2 runs of the next batch handed out");

  // The same folder for a fit of another key is refused before anything runs.
  FakeRuns fake;
  const auto other =
      calibrate(spec_of(d, {2 / 0.6}, "kernels.prefill_efficiency"), options_in(d), fake.batch());
  CHECK_THAT(error_of(other), Contains("holds the runs of another calibration (parameters differs)"));
  CHECK(fake.runs == 0);

  CalibrateOptions o = options_in(d);
  o.max_runs = 1;
  CHECK_THAT(error_of(calibrate(spec, o, fake.batch())), Contains("--max-runs: expected at least 2"));
}
