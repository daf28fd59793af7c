// End-to-end checks of `dpsim calibrate` (sim/cli/calibrate_cmd.cpp, sim/study/calibrate.h) on the I/O
// fixture (tests/e2e/cases/io_1p1d.json: one agent, storage-bound, a run takes milliseconds): JCTs that
// dpsim itself measured at known values of the engine's storage client are fitted back to those values, and
// so is a decode node's SNIC in a cluster with a hardware file per role; a spec whose two points contradict
// each other reports its residuals and exits 1; the rounds of --emit-jobs give the same fit; a bad spec exits
// 2 and writes nothing.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/e2e/support.h"

namespace {

const std::string kCalibrateCase = e2e::case_file("io_1p1d.json");

std::string calibrate_cmd(const std::string& args, const std::filesystem::path& log) {
  return e2e::timeout_prefix(120) + e2e::shell_quoted(e2e::dpsim_binary()) + " calibrate " + args + " >" +
         e2e::shell_quoted(log.string()) + " 2>&1";
}

const std::string kEngine = e2e::case_file("e2e-io-engine.json");

// The fixture's engine with its storage client at the given efficiency and overhead per block, written to
// dir.
std::string engine_at(const std::filesystem::path& dir, double efficiency, double overhead_s) {
  nlohmann::json e = e2e::read_json(kEngine);
  e["storage"]["efficiency"] = efficiency;
  e["storage"]["request_overhead_s"] = overhead_s;
  const std::string path = (dir / "measured-engine.json").string();
  std::ofstream(path) << e.dump(1);
  return path;
}

// The JCT of io_1p1d.json with `engine` and Full Blocks of `block` tokens.
double engine_jct(const std::string& engine, int block) {
  const nlohmann::json r = e2e::run_ok(
      kCalibrateCase, {"engine=" + engine, "policy.persist_block_tokens=" + std::to_string(block)});
  return r.at("summary").at("jct_s").get<double>();
}

// The spec's opening: its name and the engine file to fit.
std::string spec_head(const std::string& name) {
  return "{\"name\": \"" + name + "\", \"engine\": \"" + kEngine + "\", ";
}

std::string spec_point(const std::string& name, int block, double measured) {
  return "{\"name\": \"" + name + "\", \"scenario\": \"" + kCalibrateCase +
         "\", \"sets\": [\"policy.persist_block_tokens=" + std::to_string(block) +
         "\"], \"quantity\": \"summary.jct_s\", \"measured\": " + std::to_string(measured) +
         ", \"tolerance\": 0.01}";
}

const std::string kTwoParameters =
    R"([{"key": "storage.efficiency", "lower": 0.3, "upper": 1.0},
        {"key": "storage.request_overhead_s", "lower": 0, "upper": 5e-3}])";

}  // namespace

TEST_CASE("Calibrate: JCTs dpsim measured at known storage values -> both values recovered within 2%",
          "[e2e][calibrate]") {
  e2e::Scratch s;
  // Small blocks (4 tokens, 4 MB) pay the overhead per block; large ones (64 tokens) mostly the rate: the two
  // points tell the efficiency from the overhead.
  const std::string measured = engine_at(s.dir, 0.6, 1e-3);
  const std::string spec = (s.dir / "spec.json").string();
  std::ofstream(spec) << spec_head("io") << "\"parameters\": " << kTwoParameters << ", \"points\": ["
                      << spec_point("small", 4, engine_jct(measured, 4)) << ", "
                      << spec_point("large", 64, engine_jct(measured, 64)) << "]}";
  const auto out = s.dir / "out";
  const int code =
      e2e::shell(calibrate_cmd(e2e::shell_quoted(spec) + " --jobs 2 --out " + e2e::shell_quoted(out.string()),
                               s.dir / "calibrate.log"));
  INFO(e2e::read_text(s.dir / "calibrate.log"));
  REQUIRE(code == 0);
  const nlohmann::json c = e2e::read_json((out / "calibration.json").string());
  CHECK(c.at("fitted") == true);
  CHECK((c.at("stopped_by") == "step" || c.at("stopped_by") == "exact"));
  CHECK(c.at("parameters").at(0).at("value").get<double>() == Approx(0.6).epsilon(0.02));
  CHECK(c.at("parameters").at(1).at("value").get<double>() == Approx(1e-3).epsilon(0.02));
  for (const auto& p : c.at("points")) CHECK(std::abs(p.at("rel_error").get<double>()) <= 0.01);
  CHECK(c.at("runs").get<int>() <= 60);
  // The calibrated copy runs, and gives the measured JCTs back within the tolerance.
  CHECK(c.at("target_kind") == "engine");
  const std::string calibrated = (out / "e2e-io-engine-calibrated.json").string();
  CHECK(e2e::read_json(calibrated).at("sources").contains("storage.request_overhead_s"));
  for (const auto& p : c.at("points")) {
    const int block = p.at("name") == "small" ? 4 : 64;
    CHECK(engine_jct(calibrated, block) == Approx(p.at("measured").get<double>()).epsilon(0.01));
  }
  // A rerun reuses every run.
  REQUIRE(e2e::shell(calibrate_cmd(e2e::shell_quoted(spec) + " --out " + e2e::shell_quoted(out.string()),
                                   s.dir / "again.log")) == 0);
  const nlohmann::json again = e2e::read_json((out / "calibration.json").string());
  CHECK(again.at("runs_this_invocation") == 0);
  CHECK(again.at("parameters") == c.at("parameters"));
}

TEST_CASE(
    "Calibrate: a decode node's SNIC, measured in a cluster with a hardware file per role -> recovered, the "
    "prefill nodes keep their file",
    "[e2e][calibrate]") {
  // scenarios/sweeps/bottleneck-free-per-role.json: prefill nodes of hopper-8x400g, decode nodes of
  // hopper-4x400g (4 GPUs), split read path, so the JCT depends on the decode nodes' SNICs. The JCT is
  // measured with the decode file's snic.bw_Bps at 30 GB/s (a copy), and the spec fits that key of the decode
  // file: only hardware_decode may get the candidates' copies. Giving them to both roles (as a plain
  // `hardware`) would turn the prefill nodes into 4-GPU nodes and fit another value.
  e2e::Scratch s;
  const std::string scenario = e2e::repo_file("scenarios/sweeps/bottleneck-free-per-role.json");
  const std::string decode_file = e2e::repo_file("models/hardware/hopper-4x400g.json");
  nlohmann::json hw = e2e::read_json(decode_file);
  hw["snic"]["bw_Bps"] = 30e9;
  const std::string measured_hw = (s.dir / "decode-measured.json").string();
  std::ofstream(measured_hw) << hw.dump(1);
  const double jct = e2e::run_ok(scenario, {"workload.agents=16", "hardware_decode=" + measured_hw})
                         .at("summary")
                         .at("jct_s")
                         .get<double>();
  const std::string spec = (s.dir / "spec.json").string();
  std::ofstream(spec) << R"({"name": "per-role", "hardware": ")" << decode_file
                      << R"(", "parameters": [{"key": "snic.bw_Bps", "lower": 20e9, "upper": 50e9}],
      "points": [{"name": "mixed", "scenario": ")"
                      << scenario << R"(", "sets": ["workload.agents=16"], "quantity": "summary.jct_s",
      "measured": )" << jct
                      << R"(, "tolerance": 0.01}]})";
  const auto out = s.dir / "out";
  const int code = e2e::shell(calibrate_cmd(
      e2e::shell_quoted(spec) + " --out " + e2e::shell_quoted(out.string()), s.dir / "calibrate.log"));
  INFO(e2e::read_text(s.dir / "calibrate.log"));
  REQUIRE(code == 0);
  const nlohmann::json c = e2e::read_json((out / "calibration.json").string());
  CHECK(c.at("target_kind") == "hardware");
  CHECK(c.at("parameters").at(0).at("value").get<double>() == Approx(30e9).epsilon(0.02));
  // The best run's scenario: the prefill nodes on the scenario's own file, the decode nodes on a copy.
  const std::string best = (out / c.at("points").at(0).at("result").get<std::string>()).string();
  const nlohmann::json run = e2e::read_json(best).at("scenario");
  CHECK(run.at("hardware") == "hopper-8x400g");
  CHECK(run.at("hardware_decode").get<std::string>().find((out / "hardware").string()) == 0);
}

TEST_CASE("Calibrate: one scenario measured at two different JCTs -> residuals reported, exit 1",
          "[e2e][calibrate]") {
  e2e::Scratch s;
  const std::string spec = (s.dir / "spec.json").string();
  std::ofstream(spec) << spec_head("contradiction")
                      << R"("parameters": [{"key": "storage.efficiency", "lower": 0.3,
      "upper": 1.0}], "points": [)"
                      << spec_point("fast", 64, 3.0) << ", " << spec_point("slow", 64, 4.0) << "]}";
  const auto out = s.dir / "out";
  const int code =
      e2e::shell(calibrate_cmd(e2e::shell_quoted(spec) + " --jobs 2 --out " + e2e::shell_quoted(out.string()),
                               s.dir / "calibrate.log"));
  const std::string log = e2e::read_text(s.dir / "calibrate.log");
  INFO(log);
  CHECK(code == 1);
  CHECK(log.find("NOT FITTED: 2 of 2 points outside their tolerance") != std::string::npos);
  const nlohmann::json c = e2e::read_json((out / "calibration.json").string());
  CHECK(c.at("fitted") == false);
  const auto& pts = c.at("points");
  REQUIRE(pts.size() == 2);
  CHECK(pts.at(0).at("simulated") == pts.at(1).at("simulated"));
  CHECK(pts.at(0).at("rel_error").get<double>() > 0.01);   // above 3.0
  CHECK(pts.at(1).at("rel_error").get<double>() < -0.01);  // below 4.0
  // The least-squares compromise: ((x - 3) / 3)^2 + ((x - 4) / 4)^2 is least at x = 3.36.
  CHECK(pts.at(0).at("simulated").get<double>() == Approx(3.36).epsilon(0.01));
  CHECK(std::filesystem::exists(out / "e2e-io-engine-calibrated.json"));
}

TEST_CASE("Calibrate: --emit-jobs rounds run by hand -> the same fit as a calibrate that runs them",
          "[e2e][calibrate]") {
  e2e::Scratch s;
  const std::string measured = engine_at(s.dir, 0.6, 1e-3);
  const std::string spec = (s.dir / "spec.json").string();
  std::ofstream(spec)
      << spec_head("emit")
      << "\"parameters\": [{\"key\": \"storage.efficiency\", \"lower\": 0.3, \"upper\": 1.0}], "
      << "\"points\": [" << spec_point("large", 64, engine_jct(measured, 64)) << "]}";
  const auto direct = s.dir / "direct", rounds = s.dir / "rounds";
  const auto jobs = s.dir / "jobs.sh";
  REQUIRE(e2e::shell(calibrate_cmd(e2e::shell_quoted(spec) + " --out " + e2e::shell_quoted(direct.string()),
                                   s.dir / "direct.log")) == 0);
  int batches = 0;
  while (batches < 40) {
    std::filesystem::remove(jobs);
    REQUIRE(
        e2e::shell(calibrate_cmd(e2e::shell_quoted(spec) + " --out " + e2e::shell_quoted(rounds.string()) +
                                     " --emit-jobs " + e2e::shell_quoted(jobs.string()),
                                 s.dir / "emit.log")) == 0);
    if (!std::filesystem::exists(jobs)) break;  // done: calibration.json written instead
    batches++;
    REQUIRE(e2e::shell("sh " + e2e::shell_quoted(jobs.string()) + " >/dev/null 2>&1") == 0);
  }
  INFO(e2e::read_text(s.dir / "emit.log"));
  CHECK(batches >= 2);
  const nlohmann::json a = e2e::read_json((direct / "calibration.json").string());
  const nlohmann::json b = e2e::read_json((rounds / "calibration.json").string());
  CHECK(a.at("parameters") == b.at("parameters"));
  CHECK(a.at("history").size() == b.at("history").size());
}

TEST_CASE("Calibrate: a bad spec -> exit 2, one line naming the spec and the field, nothing written",
          "[e2e][calibrate]") {
  e2e::Scratch s;
  const std::string spec = (s.dir / "spec.json").string();
  std::ofstream(spec) << R"({"parameters": [{"key": "storage.efficiency", "lower": 0.3, "upper": 1.0},
      {"key": "storage.request_overhead_s", "lower": 0, "upper": 1e-3}, {"key": "snic.bw_Bps", "lower": 1e9,
      "upper": 1e10}, {"key": "dram.bw_Bps", "lower": 1e11, "upper": 1e13}], "points": [)"
                      << spec_point("a", 64, 3) << "]}";
  const auto out = s.dir / "out";
  const int code = e2e::shell(
      calibrate_cmd(e2e::shell_quoted(spec) + " --out " + e2e::shell_quoted(out.string()), s.dir / "log"));
  const std::string log = e2e::read_text(s.dir / "log");
  CHECK(code == 2);
  CHECK(log == "dpsim: calibrate: " + spec + ": parameters: expected at most 3 free parameters, got 4\n");
  CHECK(!std::filesystem::exists(out));
}
