// Unit tests of the calibration spec (sim/study/calibrate_spec.h): a good spec loads with its paths resolved
// and its defaults; each kind of bad spec is refused with one line naming the file and the field.
#include "sim/study/calibrate_spec.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/config/config_fixtures.h"

using Catch::Matchers::Contains;
using sim::config::testing::error_of;
using sim::config::testing::ScratchDir;
using sim::study::load_calibration_spec;

namespace {

const std::string kCases = std::string(DPSIM_SOURCE_DIR) + "/tests/e2e/cases/";

std::string point(const std::string& name, const std::string& extra = "") {
  return "{\"name\": \"" + name + "\", \"scenario\": \"" + kCases +
         "io_1p1d.json\", \"quantity\": \"summary.jct_s\", \"measured\": 3.7, \"tolerance\": 0.01" + extra +
         "}";
}

const std::string kEfficiency = R"({"key": "storage.efficiency", "lower": 0.3, "upper": 1.0})";
// The storage client's efficiency is the engine's: the specs below fit the engine file of io_1p1d.json.
const std::string kFitEngine = ", \"engine\": \"" + kCases + "e2e-io-engine.json\"";

std::string spec(const std::string& parameters, const std::string& points,
                 const std::string& extra = kFitEngine) {
  return "{\"name\": \"t\"" + extra + ", \"parameters\": [" + parameters + "], \"points\": [" + points + "]}";
}

// The error of loading `text` as a spec ("" when it loads).
std::string error_for(const std::string& text) {
  ScratchDir d;
  return error_of(load_calibration_spec(d.write("spec.json", text)));
}

}  // namespace

TEST_CASE("Calibration spec: a good spec -> its points, parameters, the engine file to fit and defaults",
          "[unit][calibrate]") {
  ScratchDir d;
  const std::string path = d.write(
      "spec.json",
      spec(kEfficiency +
               R"(, {"key": "storage.request_overhead_s", "lower": 0, "upper": 5e-3, "start": 1e-3})",
           point("small", ", \"sets\": [\"policy.persist_block_tokens=4\"], \"source\": \"a bench\"") + ", " +
               point("large")));
  const auto s = load_calibration_spec(path);
  INFO(error_of(s));
  REQUIRE(s);
  CHECK(s->name == "t");
  CHECK(s->target_kind == "engine");
  CHECK(s->target_file == kCases + "e2e-io-engine.json");
  CHECK(s->target_name == "e2e-io-engine");
  REQUIRE(s->parameters.size() == 2);
  CHECK(s->parameters[0].start == Approx(0.65));  // the middle of [0.3, 1]
  CHECK(s->parameters[1].start == 1e-3);
  REQUIRE(s->points.size() == 2);
  CHECK(s->points[0].sets == std::vector<std::string>{"policy.persist_block_tokens=4"});
  CHECK(s->points[0].source == "a bench");
  CHECK(s->points[1].scenario == kCases + "io_1p1d.json");
  CHECK(s->points[0].target_fields == std::vector<std::string>{"engine"});
  // The engine copy at given values keeps the file's other fields and sets the keys (creating the
  // storage.request_overhead_s the file does not have).
  const auto e = sim::study::target_with(*s, {0.6, 2e-3});
  CHECK(e["storage"]["efficiency"] == 0.6);
  CHECK(e["storage"]["request_overhead_s"] == 2e-3);
  CHECK(e["decode"]["cpu_s"] == 0.0005);
}

TEST_CASE("Calibration spec: a relative scenario path and a named engine or hardware file -> resolved",
          "[unit][calibrate]") {
  ScratchDir d;
  const std::string points = R"("points": [{"name": "dp", "scenario": "scenarios/paper/ds27b-64k.json",
      "quantity": "summary.ttft_s.mean", "measured": 2, "tolerance": 0.05}]})";
  const auto s = load_calibration_spec(d.write("spec.json", R"({"engine": "dualpath-paper", "parameters":
      [{"key": "kernels.prefill_efficiency", "lower": 0.2, "upper": 0.8}], )" +
                                                                points));
  INFO(error_of(s));
  REQUIRE(s);
  CHECK(s->target_kind == "engine");
  CHECK(s->target_file == std::string(DPSIM_SOURCE_DIR) + "/models/engine/dualpath-paper.json");
  CHECK(s->name == "spec");  // the file's stem
  const auto h = load_calibration_spec(d.write("hw.json", R"({"hardware": "hopper-8x400g", "parameters":
      [{"key": "snic.bw_Bps", "lower": 25e9, "upper": 100e9}], )" +
                                                              points));
  INFO(error_of(h));
  REQUIRE(h);
  CHECK(h->target_kind == "hardware");
  CHECK(h->target_file == std::string(DPSIM_SOURCE_DIR) + "/models/hardware/hopper-8x400g.json");
  CHECK(h->points[0].target_fields == std::vector<std::string>{"hardware"});
  // One file at a time; an engine key in a hardware file is refused, with where it goes.
  CHECK_THAT(error_of(load_calibration_spec(d.write("both.json", R"({"hardware": "hopper-8x400g",
      "engine": "dualpath-paper", "parameters": [{"key": "snic.bw_Bps", "lower": 25e9, "upper": 1e11}], )" +
                                                                     points))),
             Contains("both.json: engine: expected absent when \"hardware\" is given"));
  CHECK_THAT(
      error_of(load_calibration_spec(d.write("kernel-in-hw.json", R"({"hardware": "hopper-8x400g",
      "parameters": [{"key": "kernels.prefill_efficiency", "lower": 0.2, "upper": 0.8}], )" +
                                                                      points))),
      Contains("is not a value the hardware file takes") && Contains("a node file holds hardware only"));
}

TEST_CASE("Calibration spec: more than three free parameters -> error", "[unit][calibrate]") {
  const std::string p = kEfficiency + R"(, {"key": "storage.request_overhead_s", "lower": 0, "upper": 1e-3},
      {"key": "snic.bw_Bps", "lower": 1e9, "upper": 2e10}, {"key": "dram.bw_Bps", "lower": 1e11, "upper": 1e13})";
  const std::string e =
      error_for(spec(p, point("a") + "," + point("b") + "," + point("c") + "," + point("d")));
  CHECK_THAT(e, Contains("spec.json: parameters: expected at most 3 free parameters, got 4"));
}

TEST_CASE("Calibration spec: inverted bounds, a start outside them -> error naming the field",
          "[unit][calibrate]") {
  CHECK_THAT(error_for(spec(R"({"key": "storage.efficiency", "lower": 0.8, "upper": 0.2})", point("a"))),
             Contains("parameters[0].upper: expected a number > lower (0.8), got 0.2"));
  CHECK_THAT(error_for(spec(R"({"key": "storage.efficiency", "lower": 0.2, "upper": 0.8, "start": 0.9})",
                            point("a"))),
             Contains("parameters[0].start: expected a number in [lower, upper] = [0.2, 0.8], got 0.9"));
}

TEST_CASE("Calibration spec: an unknown quantity -> error listing the quantities", "[unit][calibrate]") {
  const std::string e = error_for(spec(kEfficiency, R"({"name": "a", "scenario": ")" + kCases +
                                                        R"(io_1p1d.json", "quantity": "summary.jct",
      "measured": 3.7, "tolerance": 0.01})"));
  CHECK_THAT(e, Contains("points[0].quantity: expected a results quantity, one of summary.jct_s,"));
  CHECK_THAT(e, Contains("got \"summary.jct\""));
}

TEST_CASE("Calibration spec: missing fields -> error naming each", "[unit][calibrate]") {
  CHECK_THAT(error_for(R"({"parameters": [)" + kEfficiency + "]}"),
             Contains("spec.json: points: expected an array of measured points"));
  CHECK_THAT(error_for(spec("", point("a"))), Contains("spec.json: parameters: expected an array of 1 to 3"));
  CHECK_THAT(error_for(spec(R"({"lower": 0.2, "upper": 0.8})", point("a"))),
             Contains("parameters[0].key: expected a string, got nothing (the field is missing)"));
  CHECK_THAT(error_for(spec(R"({"key": "storage.efficiency", "upper": 0.8})", point("a"))),
             Contains("parameters[0].lower: expected a number (the lower bound), got nothing"));
  const std::string no_measured = R"({"name": "a", "scenario": ")" + kCases +
                                  R"(io_1p1d.json", "quantity": "summary.jct_s", "tolerance": 0.01})";
  CHECK_THAT(error_for(spec(kEfficiency, no_measured)),
             Contains("points[0].measured: expected a number > 0, got nothing (the field is missing)"));
  const std::string no_tolerance = R"({"name": "a", "scenario": ")" + kCases +
                                   R"(io_1p1d.json", "quantity": "summary.jct_s", "measured": 3})";
  CHECK_THAT(error_for(spec(kEfficiency, no_tolerance)),
             Contains("points[0].tolerance: expected a number > 0"));
  CHECK_THAT(error_for(spec(kEfficiency, R"({"name": "a", "quantity": "summary.jct_s", "measured": 3,
      "tolerance": 0.01})")),
             Contains("points[0].scenario: expected a string, got nothing"));
}

TEST_CASE("Calibration spec: other bad inputs -> one line naming the spec and the field",
          "[unit][calibrate]") {
  // An unknown key, at the top and in a point.
  CHECK_THAT(error_for(spec(kEfficiency, point("a"), kFitEngine + ", \"tolerance\": 0.1")),
             Contains("spec.json: tolerance: unknown key"));
  CHECK_THAT(error_for(spec(kEfficiency, point("a", ", \"wieght\": 2"))),
             Contains("points[0].wieght: unknown key"));
  CHECK_THAT(error_for(spec(kEfficiency, point("a", ", \"weight\": 0"))),
             Contains("points[0].weight: expected a number > 0, got 0"));
  CHECK_THAT(error_for(spec(kEfficiency, point("a", ", \"weight\": \"2\""))),
             Contains("points[0].weight: expected a number > 0"));
  // A key the engine file does not take, a bound it does not take.
  CHECK_THAT(
      error_for(spec(R"({"key": "storage.efficency", "lower": 0.2, "upper": 0.8})", point("a"))),
      Contains("spec.json: parameters[0]: storage.efficency = 0.2 (its lower) is not a value the engine "
               "file takes"));
  CHECK_THAT(
      error_for(spec(R"({"key": "storage.efficiency", "lower": 0.5, "upper": 1.5})", point("a"))),
      Contains("parameters[0]: storage.efficiency = 1.5 (its upper) is not a value the engine file takes"));
  CHECK_THAT(error_for(spec(R"({"key": "sources.x", "lower": 0.5, "upper": 1})", point("a"))),
             Contains("parameters[0].key: expected the key path of a number in the file to fit"));
  // Two parameters of one key; two points of one name; fewer points than parameters.
  CHECK_THAT(error_for(spec(kEfficiency + "," + kEfficiency, point("a") + "," + point("b"))),
             Contains("parameters[1].key: expected a key not fitted already"));
  CHECK_THAT(error_for(spec(kEfficiency, point("a") + "," + point("a"))),
             Contains("points[1].name: expected a name not used already"));
  CHECK_THAT(
      error_for(spec(kEfficiency + R"(, {"key": "storage.request_overhead_s", "lower": 0, "upper": 1e-3})",
                     point("a"))),
      Contains("points: expected at least as many measured points as free parameters (2), got 1"));
  // A point that sets the file to fit (or overrides its values); a bad name; a scenario that does not load
  // with its sets.
  CHECK_THAT(
      error_for(spec(kEfficiency, point("a", ", \"sets\": [\"engine=x.json\"]"))),
      Contains("points[0].sets: expected an array of \"key.path=value\" overrides, neither \"engine\""));
  CHECK_THAT(
      error_for(spec(kEfficiency, point("a", ", \"sets\": [\"engine_overrides.storage.efficiency=0.5\"]"))),
      Contains("points[0].sets: expected an array") && Contains("engine_overrides"));
  const std::string hw_snic = R"({"key": "snic.bw_Bps", "lower": 1e9, "upper": 2e10})";
  CHECK_THAT(
      error_for(spec(hw_snic, point("a", ", \"sets\": [\"hardware=x.json\"]"), "")),
      Contains("points[0].sets: expected an array of \"key.path=value\" overrides, none of \"hardware\""));
  CHECK_THAT(error_for(spec(kEfficiency, point("a b"))),
             Contains("points[0].name: expected a name of 1 to 64"));
  CHECK_THAT(error_for(spec(kEfficiency, point("a", ", \"sets\": [\"cluster.prefill_nodes=0\"]"))),
             Contains("spec.json: points[0] (a): "));
  // Points on different hardware files, and no "hardware" to say which to fit.
  const std::string other =
      R"({"name": "b", "scenario": ")" + kCases +
      R"(units_1p1d.json", "quantity": "summary.jct_s", "measured": 3, "tolerance": 0.01})";
  CHECK_THAT(
      error_for(spec(hw_snic, point("a") + "," + other, "")),
      Contains("spec.json: hardware: expected the hardware file to fit, since the points' scenarios name "
               "different ones"));
}

TEST_CASE(
    "Calibration spec: the shipped scenarios/paper/calibration.json -> the two fitted values of the paper's "
    "engine on its two calibration measurements",
    "[unit][calibrate]") {
  const auto s = load_calibration_spec(std::string(DPSIM_SOURCE_DIR) + "/scenarios/paper/calibration.json");
  INFO(error_of(s));
  REQUIRE(s);
  CHECK(s->target_kind == "engine");
  CHECK(s->target_file == std::string(DPSIM_SOURCE_DIR) + "/models/engine/dualpath-paper.json");
  REQUIRE(s->parameters.size() == 2);
  CHECK(s->parameters[0].key == "kernels.prefill_efficiency");
  CHECK(s->parameters[1].key == "storage.request_overhead_s");
  // The file's values (the fit's) lie inside the bounds.
  for (const auto& p : s->parameters) {
    const auto v = sim::study::number_at(nlohmann::json::parse(s->target.dump()), p.key);
    REQUIRE(v);
    CHECK(*v >= p.lower);
    CHECK(*v <= p.upper);
  }
  for (const auto& p : s->parameters) CHECK(p.start == Approx((p.lower + p.upper) / 2));
  REQUIRE(s->points.size() == 2);
  CHECK(s->points[0].measured == 10052);  // Basic, PAPER.md §6
  CHECK(s->points[1].measured == 5365);   // DualPath
  CHECK(s->points[0].quantity == "summary.jct_s");
}

TEST_CASE(
    "Calibration spec: a scenario with a file per role -> the runs replace only the fitted file's roles",
    "[unit][calibrate]") {
  const std::string sweeps = std::string(DPSIM_SOURCE_DIR) + "/scenarios/sweeps/";
  auto text = [&](const std::string& hardware) {
    return "{" + hardware +
           R"("parameters": [{"key": "snic.bw_Bps", "lower": 25e9, "upper": 100e9}],
           "points": [{"name": "mixed", "scenario": ")" +
           sweeps +
           R"(bottleneck-free-per-role.json", "quantity": "summary.jct_s", "measured": 3, "tolerance": 0.05}]})";
  };
  ScratchDir d;
  // Without a "hardware": which of the two files to fit is not said.
  CHECK_THAT(error_of(load_calibration_spec(d.write("none.json", text("")))),
             Contains("none.json: hardware: expected the hardware file to fit") &&
                 Contains("runs prefill on") && Contains("hopper-4x400g.json"));
  // The decode file: only hardware_decode goes to the candidate's copy (the prefill nodes keep theirs).
  const auto dec = load_calibration_spec(d.write("dec.json", text("\"hardware\": \"hopper-4x400g\", ")));
  INFO(error_of(dec));
  REQUIRE(dec);
  CHECK(dec->points[0].target_fields == std::vector<std::string>{"hardware_decode"});
  // The prefill file: the spec's "hardware" replaces the scenario's, which only prefill runs on.
  const auto pre = load_calibration_spec(d.write("pre.json", text("\"hardware\": \"hopper-8x400g\", ")));
  INFO(error_of(pre));
  REQUIRE(pre);
  CHECK(pre->points[0].target_fields == std::vector<std::string>{"hardware_prefill"});
  // A file neither role runs on is refused; a point setting a role's file is refused.
  CHECK_THAT(error_of(load_calibration_spec(d.write("other.json", text("\"hardware\": \"h20-8x400g\", ")))),
             Contains("points[0] (mixed): expected a scenario with a role on the hardware file to fit"));
  const std::string hw_snic = R"({"key": "snic.bw_Bps", "lower": 1e9, "upper": 2e10})";
  CHECK_THAT(error_for(spec(hw_snic, point("p", ", \"sets\": [\"hardware_decode=h20-8x400g\"]"), "")),
             Contains("points[0].sets") && Contains("hardware_decode"));
  // One file for both roles: the runs set "hardware".
  const auto one = load_calibration_spec(d.write("one.json", spec(hw_snic, point("p"), "")));
  REQUIRE(one);
  CHECK(one->points[0].target_fields == std::vector<std::string>{"hardware"});
}
