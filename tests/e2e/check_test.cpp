// End-to-end checks of `dpsim check` (expect bands) and `dpsim compare` (exit 1 when B is worse).
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/e2e/support.h"

namespace {

// tests/e2e/cases/io_1p1d.json (one agent, JCT about 1.1 s) with `expect` added, written to `path`.
void write_scenario(const std::string& path, const nlohmann::json& expect) {
  nlohmann::json sc = e2e::read_json(e2e::case_file("io_1p1d.json"));
  sc["hardware"] = e2e::case_file("e2e-io-hw.json");
  sc["engine"] = e2e::case_file("e2e-io-engine.json");
  sc["model"] = e2e::case_file("e2e-io-model.json");
  sc["workload"]["trace"] = e2e::case_file("one_agent.jsonl");
  sc["expect"] = expect;
  std::ofstream(path) << sc.dump(1);
}

e2e::Output check(const std::string& scenario, const std::filesystem::path& scratch) {
  const auto out = scratch / "check.txt";
  const int code = e2e::shell(e2e::timeout_prefix(60) + e2e::shell_quoted(e2e::dpsim_binary()) + " check " +
                              e2e::shell_quoted(scenario) + " >" + e2e::shell_quoted(out.string()) + " 2>&1");
  return {code, e2e::read_text(out)};
}

}  // namespace

TEST_CASE("Check: bands the run meets -> exit 0 with each band's measured value", "[e2e][check]") {
  e2e::Scratch s;
  const std::string sc = (s.dir / "ok.json").string();
  write_scenario(sc, nlohmann::json::parse(R"([
    {"key": "summary.turns_completed", "min": 4, "max": 4},
    {"key": "resource_classes.prefill.snic.in", "min": 0.001},
    {"key": "summary.jct_s", "ratio": [["policy.read_path=pe"], ["policy.read_path=pe"]], "min": 1, "max": 1}
  ])"));
  const e2e::Output o = check(sc, s.dir);
  INFO(o.text);
  CHECK(o.code == 0);
  CHECK(o.text.find("all bands hold") != std::string::npos);
  CHECK(o.text.find("summary.turns_completed: measured 4, expected in [4, 4]") != std::string::npos);
}

TEST_CASE("Check: a band the run breaks -> exit 1 listing it with measured and expected", "[e2e][check]") {
  e2e::Scratch s;
  const std::string sc = (s.dir / "broken.json").string();
  write_scenario(sc, nlohmann::json::parse(R"([
    {"key": "summary.turns_completed", "min": 1},
    {"key": "summary.jct_s", "max": 0.001, "note": "impossible on purpose"},
    {"key": "summary.no_such_key", "min": 0}
  ])"));
  const e2e::Output o = check(sc, s.dir);
  INFO(o.text);
  CHECK(o.code == 1);
  CHECK(o.text.find("2 broken band(s)") != std::string::npos);
  CHECK(o.text.find("expect[1] summary.jct_s: measured") != std::string::npos);
  CHECK(o.text.find("expected <= 0.001") != std::string::npos);
  CHECK(o.text.find("expect[2] summary.no_such_key: measured (missing or not a number)") !=
        std::string::npos);
}

TEST_CASE("Check: a malformed expect block -> exit 2 naming the JSON path", "[e2e][check]") {
  e2e::Scratch s;
  const std::string sc = (s.dir / "bad.json").string();
  write_scenario(sc, nlohmann::json::parse(R"([{"key": "summary.jct_s", "maximum": 3}])"));
  const e2e::Output o = check(sc, s.dir);
  INFO(o.text);
  CHECK(o.code == 2);
  CHECK(o.text.find("expect[0]") != std::string::npos);
}

TEST_CASE("Compare: B worse beyond the tolerance -> exit 1, within it -> exit 0", "[e2e][compare]") {
  e2e::Scratch s;
  auto result = [](double jct) {
    return nlohmann::json{{"summary", {{"jct_s", jct}, {"ttft_s", {{"mean", 1.0}, {"p99", 2.0}}}}},
                          {"bottleneck", {{"resource", "prefill.snic.in"}, {"utilization", 0.9}}},
                          {"resource_classes", {{"prefill.snic.in", 0.9}}}};
  };
  const auto a = s.dir / "a.json", b = s.dir / "b.json";
  std::ofstream(a) << result(100).dump();
  std::ofstream(b) << result(110).dump();
  const std::string cmd = e2e::shell_quoted(e2e::dpsim_binary()) + " compare " +
                          e2e::shell_quoted(a.string()) + " " + e2e::shell_quoted(b.string());
  CHECK(e2e::shell(cmd + " --tolerance 5 >/dev/null") == 1);
  CHECK(e2e::shell(cmd + " --tolerance 15 >/dev/null") == 0);
  // B better than A: never "worse".
  CHECK(e2e::shell(e2e::shell_quoted(e2e::dpsim_binary()) + " compare " + e2e::shell_quoted(b.string()) +
                   " " + e2e::shell_quoted(a.string()) + " --tolerance 0 >/dev/null") == 0);
}
