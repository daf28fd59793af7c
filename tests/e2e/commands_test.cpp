// The commands a user runs first and that no other test reaches: `dpsim demo` (what `make run` runs),
// `dpsim bench` (`make bench`), `dpsim trace gen` / `trace stats`, and `dpsim run`'s table on stdout. Each
// is checked against an independent path: the results JSONs it wrote, a separate `dpsim run` of the same
// scenario, or the trace file read back by the test.
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

namespace fs = std::filesystem;

// Runs `dpsim <args>` in `dir` with stdout and stderr in <dir>/out.txt; its exit code and that text.
e2e::Output commands_run(const fs::path& dir, const std::string& args, double timeout_s = 120) {
  const std::string log = (dir / "out.txt").string();
  const int code = e2e::shell("cd " + e2e::shell_quoted(dir.string()) + " && " +
                              e2e::timeout_prefix(timeout_s) + e2e::shell_quoted(e2e::dpsim_binary()) + " " +
                              args + " >" + e2e::shell_quoted(log) + " 2>&1");
  return {code, e2e::read_text(log)};
}

// The first number after `label` in `text` (NaN when absent).
double number_after(const std::string& text, const std::string& label) {
  std::smatch m;
  const std::regex re(label + R"(\s+([-+0-9.eE]+))");
  return std::regex_search(text, m, re) ? std::stod(m[1].str()) : std::nan("");
}

}  // namespace

TEST_CASE("Demo: the paper's scenario at 16 agents -> its range, and Basic, DualPath and Oracle as run") {
  e2e::Scratch s;
  const std::string scenario = e2e::repo_file("scenarios/paper/ds660b-64k.json");
  const e2e::Output o = commands_run(
      s.dir, "demo --scenario " + e2e::shell_quoted(scenario) + " --set workload.agents=16 --out-dir demo");
  INFO(o.text);
  REQUIRE(o.code == 0);
  // DualPath section 4.2 on the paper's hardware (g = 8, s = 1, M / Bs = 10).
  CHECK_THAT(o.text, Catch::Contains("1/7 <= P/D <= 7/2"));
  CHECK_THAT(o.text, Catch::Contains("2P4D, 16 agents"));
  double jct[3];
  const char* names[] = {"Basic", "DualPath", "Oracle"};
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json r = e2e::read_json((s.dir / "demo" / (std::string(names[i]) + ".json")).string());
    e2e::check_invariants(r);
    jct[i] = e2e::num(r, "jct_s");
  }
  // The table's JCT row is the three results' JCTs, in that order.
  std::smatch m;
  REQUIRE(std::regex_search(o.text, m, std::regex(R"(JCT \(s\)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+))")));
  for (int i = 0; i < 3; ++i) CHECK(std::stod(m[i + 1].str()) == Approx(jct[i]).margin(0.051));
  // Free transfers never slow a run down, and the second read path never slows Basic's.
  CHECK(jct[2] <= jct[1]);
  CHECK(jct[1] <= jct[0]);
}

TEST_CASE("Bench: two scenarios -> the base first, its ratio 1, and each row's turns and JCT a dpsim run's") {
  e2e::Scratch s;
  const std::string a = e2e::case_file("io_1p1d.json"), b = e2e::case_file("replay_1p1d.json");
  const e2e::Output o = commands_run(s.dir, "bench " + e2e::shell_quoted(a) + " " + e2e::shell_quoted(b) +
                                                " --base replay_1p1d --out bench.json");
  INFO(o.text);
  REQUIRE(o.code == 0);
  const nlohmann::json rows = e2e::read_json((s.dir / "bench.json").string());
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("scenario") == b);  // the base is measured first
  CHECK(rows[1].at("scenario") == a);
  CHECK(rows[0].at("us_per_turn_vs_base").get<double>() == Approx(1.0));
  for (const auto& row : rows) {
    const nlohmann::json run = e2e::run_ok(row.at("scenario").get<std::string>());
    CHECK(row.at("turns") == run.at("summary").at("turns_completed"));
    CHECK(row.at("jct_s").get<double>() == e2e::num(run, "jct_s"));  // the same seed gives the same run
    CHECK(row.at("wall_s").get<double>() > 0);
    CHECK(row.at("peak_rss_bytes").get<double>() > 1e6);  // a child process's RSS, not zero
  }
  CHECK_THAT(o.text, Catch::Contains("io_1p1d") && Catch::Contains("replay_1p1d"));

  const e2e::Output bad =
      commands_run(s.dir, "bench " + e2e::shell_quoted(a) + " --base nothing --out b.json");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.text, Catch::Contains("--base nothing"));
  CHECK_FALSE(fs::exists(s.dir / "b.json"));
}

TEST_CASE("Trace: gen writes a Table 2 set whose turns stats reads back as the test counts them") {
  e2e::Scratch s;
  const e2e::Output gen =
      commands_run(s.dir, "trace gen --dataset 64k --trajectories 40 --seed 5 --out t.jsonl");
  INFO(gen.text);
  REQUIRE(gen.code == 0);
  const std::vector<nlohmann::json> ts = e2e::read_jsonl((s.dir / "t.jsonl").string());
  REQUIRE(ts.size() == 40);
  double turns = 0;
  for (const auto& t : ts) turns += static_cast<double>(t.at("turns").size());
  CHECK_THAT(gen.text,
             Catch::Contains("40 trajectories, " + std::to_string(static_cast<int>(turns)) + " turns"));

  const e2e::Output stats = commands_run(s.dir, "trace stats t.jsonl --dataset 64k");
  INFO(stats.text);
  REQUIRE(stats.code == 0);
  CHECK(number_after(stats.text, "\n  turns") == Approx(turns / 40).margin(0.051));
  CHECK(number_after(stats.text,
                     "Table 2\\s+diff\\n  turns\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9.]+") ==
        157);  // the 64K row's Turns, beside the measured ones

  // A request trace: the Azure excerpt's 30 rows are 30 requests.
  const e2e::Output azure = commands_run(
      s.dir, "trace stats " + e2e::shell_quoted(e2e::case_file("azure_excerpt.csv")) + " --format azure");
  INFO(azure.text);
  REQUIRE(azure.code == 0);
  CHECK_THAT(azure.text, Catch::Contains("azure trace, 30 requests"));

  const e2e::Output bad = commands_run(s.dir, "trace gen --dataset 65k --out x.jsonl");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.text, Catch::Contains("--dataset"));
  CHECK_FALSE(fs::exists(s.dir / "x.jsonl"));
}

TEST_CASE("Run: without --quiet -> a table on stdout whose JCT and counts are the results JSON's") {
  e2e::Scratch s;
  const e2e::Output o = commands_run(s.dir, "run " + e2e::shell_quoted(e2e::case_file("io_1p1d.json")) +
                                                " --out r.json --set sim.progress=false");
  INFO(o.text);
  REQUIRE(o.code == 0);
  const nlohmann::json r = e2e::read_json((s.dir / "r.json").string());
  CHECK(number_after(o.text, "JCT") == Approx(e2e::num(r, "jct_s")).margin(0.051));
  CHECK(number_after(o.text, "turns") == e2e::num(r, "turns_completed"));
  CHECK_THAT(o.text, Catch::Contains("bottleneck: " + r.at("bottleneck").at("resource").get<std::string>()));
  CHECK_THAT(o.text, Catch::Contains("results: r.json"));
}

TEST_CASE("Run: the table names the model, engine and hardware, --out onto a directory fails before the run",
          "[e2e]") {
  e2e::Scratch s;
  const std::string scenario = e2e::shell_quoted(e2e::case_file("io_1p1d.json"));
  const e2e::Output o = commands_run(s.dir, "run " + scenario + " --out r.json --set sim.progress=false");
  INFO(o.text);
  REQUIRE(o.code == 0);
  // The table's first line, before its JCT line (a sanitizer build's SimGrid may log a line before it).
  CHECK_THAT(o.text, Catch::Contains("model e2e-io-model   engine e2e-io-engine   hardware e2e-io-hw\nJCT "));
  // Before, the run went to its end and then said "cannot rename ..." with no reason.
  fs::create_directories(s.dir / "results");
  const e2e::Output d = commands_run(s.dir, "run " + scenario + " --out results");
  INFO(d.text);
  CHECK(d.code == 2);
  CHECK_THAT(d.text, Catch::EndsWith("\ndpsim: --out: results is a directory, expected a file\n") ||
                         Catch::Equals("dpsim: --out: results is a directory, expected a file\n"));
  // --out into directories that do not exist: they are created (every command's --out does: README).
  const e2e::Output n = commands_run(s.dir, "run " + scenario + " --quiet --out new/dir/r.json");
  CHECK(n.code == 0);
  CHECK(fs::exists(s.dir / "new" / "dir" / "r.json"));
}

TEST_CASE("Run: an output onto an input or onto another output, or an empty --out -> refused before the run",
          "[e2e]") {
  // Before: --out onto the scenario destroyed it, outputs.requests onto --out left the results where the
  // records were meant to be, and --out "" wrote out/<name>.json.
  e2e::Scratch s;
  fs::copy_file(e2e::case_file("io_1p1d.json"), s.dir / "sc.json");
  for (const char* f : {"e2e-io-hw.json", "e2e-io-engine.json", "e2e-io-model.json", "one_agent.jsonl"})
    fs::copy_file(e2e::case_file(f), s.dir / f);
  const std::string before = e2e::read_text((s.dir / "sc.json").string());
  struct Case {
    std::string args, line;
  };
  const std::vector<Case> cases = {
      {"--out sc.json",
       "dpsim: sc.json: --out sc.json is the scenario file (sc.json): an output must not "
       "overwrite an input\n"},
      {"--out ./e2e-io-engine.json", "--out ./e2e-io-engine.json is the engine file ("},
      {"--out r.csv --set outputs.requests=r.csv",
       "dpsim: sc.json: outputs.requests r.csv is also --out (r.csv): two outputs of one run must be two "
       "files\n"},
      {"--out r.json --set outputs.timeline=e2e-io-model.json",
       "outputs.timeline e2e-io-model.json is the model file ("},
      {"--out ''", "dpsim: sc.json: --out: an empty path, expected a file to write\n"}};
  for (const auto& c : cases) {
    const e2e::Output o = commands_run(s.dir, "run sc.json --quiet " + c.args);
    INFO(c.args << "\n" << o.text);
    CHECK(o.code == 2);
    CHECK_THAT(o.text, Catch::Contains(c.line));
    CHECK(e2e::read_text((s.dir / "sc.json").string()) == before);
    CHECK_FALSE(fs::exists(s.dir / "r.json"));
    CHECK_FALSE(fs::exists(s.dir / "r.csv"));
    CHECK_FALSE(fs::exists(s.dir / "out"));
  }
  // The same files apart run.
  const e2e::Output ok =
      commands_run(s.dir, "run sc.json --quiet --out r.json --set outputs.requests=turns.csv");
  INFO(ok.text);
  CHECK(ok.code == 0);
  CHECK(fs::exists(s.dir / "r.json"));
  CHECK(fs::exists(s.dir / "turns.csv"));
}

TEST_CASE("Every command's error line begins with dpsim: (bottleneck, trace, a bad flag)", "[e2e]") {
  e2e::Scratch s;
  for (const std::string args : {"bottleneck no-such-hardware", "bottleneck --no-such-flag",
                                 "trace stats no-such-file.jsonl", "run"}) {
    const e2e::Output o = commands_run(s.dir, args);
    INFO(args << "\n" << o.text);
    CHECK(o.code == 2);
    CHECK_THAT(o.text, Catch::StartsWith("dpsim: "));
  }
}
