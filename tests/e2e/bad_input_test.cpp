// Runs the real `dpsim run` on every case of tests/bad_inputs/cases.tsv: each must fail cleanly with
// exit code 2, one message on stderr naming the case file and the expected field, and no output file.
#include <sys/stat.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

namespace fs = std::filesystem;
using e2e::Scratch;
using e2e::shell_quoted;

struct BadInputCase {
  int line = 0;
  std::string file;               // relative to tests/bad_inputs/
  std::vector<std::string> args;  // extra arguments
  std::string expected;           // substring of the error message
};

const fs::path kCasesDir = fs::path(DPSIM_SOURCE_DIR) / "tests" / "bad_inputs";

std::vector<BadInputCase> read_cases() {
  std::vector<BadInputCase> cases;
  std::ifstream in(kCasesDir / "cases.tsv");
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (text.empty() || text[0] == '#') continue;
    size_t t1 = text.find('\t');
    size_t t2 = t1 == std::string::npos ? t1 : text.find('\t', t1 + 1);
    if (t2 == std::string::npos) FAIL("cases.tsv:" << n << ": expected three tab-separated columns");
    BadInputCase c;
    c.line = n;
    c.file = text.substr(0, t1);
    std::istringstream args(text.substr(t1 + 1, t2 - t1 - 1));
    for (std::string a; args >> a;) c.args.push_back(a);
    c.expected = text.substr(t2 + 1);
    cases.push_back(c);
  }
  return cases;
}

}  // namespace

TEST_CASE("Bad inputs: every case of tests/bad_inputs/cases.tsv -> exit 2, one clear message, no output",
          "[e2e]") {
  std::vector<BadInputCase> cases = read_cases();
  REQUIRE(cases.size() >= 12);
  for (const BadInputCase& c : cases) {
    Scratch scratch;
    REQUIRE_FALSE(scratch.dir.empty());
    fs::path out_dir = scratch.dir / "out";
    fs::create_directories(out_dir);
    fs::path err_file = scratch.dir / "stderr.txt";
    std::string scenario = (kCasesDir / c.file).string();

    std::string cmd = shell_quoted(e2e::dpsim_binary()) + " run " + shell_quoted(scenario);
    for (const auto& a : c.args) cmd += " " + shell_quoted(a);
    cmd += " --out " + shell_quoted((out_dir / "out.json").string()) + " >/dev/null 2>" +
           shell_quoted(err_file.string());
    int status = std::system(cmd.c_str());
    std::string err = e2e::read_text(err_file);

    INFO("cases.tsv:" << c.line << ": " << cmd << "\nstderr: " << err);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    // The expected text and the case file are on the same line: one message, not scattered output.
    std::string message;
    std::istringstream lines(err);
    for (std::string l; std::getline(lines, l);)
      if (message.empty() && l.find(c.expected) != std::string::npos) message = l;
    CHECK_THAT(err, Catch::Matchers::Contains(c.expected));
    CHECK_THAT(message, Catch::Matchers::Contains(scenario));
    CHECK(fs::is_empty(out_dir));  // no results, no partial or temporary file
  }
}

TEST_CASE("Over context: workload.over_context=drop -> the turns that do not fit are left out and counted",
          "[e2e]") {
  // Agent "long": turn 0 ends at 100,100 tokens, turn 1 at 170,200 > DS 660B's 163,840: its trajectory ends
  // after turn 0. Agent "short" is untouched.
  const auto r =
      e2e::run_ok(e2e::repo_file("tests/bad_inputs/trace_over_context.json"), {"workload.over_context=drop"});
  CHECK(r.at("summary").at("turns_dropped_over_context") == 1);
  CHECK(r.at("summary").at("turns_total") == 2);
  // Replay: the 171,000-token request is skipped, the other one runs.
  const auto m = e2e::run_ok(e2e::repo_file("tests/bad_inputs/mooncake_over_context.json"),
                             {"workload.over_context=drop"});
  CHECK(m.at("summary").at("turns_dropped_over_context") == 1);
  CHECK(m.at("summary").at("turns_total") == 1);
}

TEST_CASE(
    "Cluster size: more actors than vm.max_map_count allows -> exit 2 naming the limit, before any "
    "simulation, and 2,000 nodes start and run",
    "[e2e]") {
  // Each SimGrid actor takes two memory mappings (its stack and the stack's guard page); past the kernel's
  // vm.max_map_count SimGrid aborts (exit 134) while starting them. On nodes of 8 GPUs with 4 read lanes, a
  // node costs about 4 actors and a decode node 16 more (a loader and a persister per GPU), so D decode
  // and D/2 prefill nodes need about 2 x 22 D mappings: D = limit / 40 is 10% too many.
  std::ifstream limit_file("/proc/sys/vm/max_map_count");
  long long limit = 0;
  if (!(limit_file >> limit) || limit <= 0) {
    WARN("no /proc/sys/vm/max_map_count: nothing to check");
    return;
  }
  const long long d = limit / 40 + 1, p = d / 2;
  const e2e::Run big = e2e::run_dpsim(
      e2e::case_file("ep_1p2d.json"),
      {"cluster.prefill_nodes=" + std::to_string(p), "cluster.decode_nodes=" + std::to_string(d)}, 120);
  INFO(big.command << "\nstderr: " << big.stderr_text);
  CHECK(big.exit_code == 2);
  CHECK(big.result.is_null());
  CHECK_THAT(big.stderr_text, Catch::Matchers::Contains("ep_1p2d.json: cluster: "));
  CHECK_THAT(big.stderr_text, Catch::Matchers::Contains("vm.max_map_count = " + std::to_string(limit)));
  CHECK(big.stderr_text.find("Failed to protect stack") == std::string::npos);
  // 2,000 nodes (16,000 GPUs) fit the kernel's default limit (65,530): about 28,800 actors. Not under
  // DPSIM_SG_CONTEXTS (make test-sanitize's thread contexts: an OS thread per actor, which the system's
  // thread limits bound instead).
  if (limit >= 65530 && std::getenv("DPSIM_SG_CONTEXTS") == nullptr) {
    const e2e::Run ok = e2e::run_dpsim(e2e::case_file("ep_1p2d.json"),
                                       {"cluster.prefill_nodes=700", "cluster.decode_nodes=1300"}, 120);
    INFO(ok.command << "\nstderr: " << ok.stderr_text);
    CHECK(ok.exit_code == 0);
    REQUIRE(!ok.result.is_null());
    CHECK(ok.result.at("summary").at("turns_completed") == 1);
  }
}

TEST_CASE("Bad inputs: a trace that is a FIFO, a sweep of 2M points, a plan of 1M nodes -> refused at once",
          "[e2e]") {
  // Before: the FIFO blocked dpsim in open() until killed; the sweep and the plan computed for minutes with
  // no output (their --emit-jobs wrote nothing before that).
  e2e::Scratch s;
  const std::string fifo = (s.dir / "trace.jsonl").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const e2e::Run r = e2e::run_dpsim(e2e::case_file("io_1p1d.json"), {"workload.trace=" + fifo}, 10);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.stderr_text, Catch::Contains(fifo + ": expected a trajectory JSONL file, got a FIFO (not a "
                                                   "regular file)"));
  CHECK(r.wall_s < 5);
  const std::string scenario = e2e::shell_quoted(e2e::repo_file("scenarios/paper/ds660b-64k.json"));
  const std::string bin = e2e::shell_quoted(e2e::dpsim_binary());
  const std::string log = e2e::shell_quoted((s.dir / "log").string());
  const auto timed = [&](const std::string& args) {
    const auto t0 = std::chrono::steady_clock::now();
    const int code = e2e::shell(e2e::timeout_prefix(20) + bin + " " + args + " >" + log + " 2>&1");
    return std::make_pair(code, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  };
  const auto [sweep_code, sweep_s] = timed("sweep " + scenario + " --p 1..2000000 --d 1 --emit-jobs " +
                                           e2e::shell_quoted((s.dir / "jobs.sh").string()) + " --out " +
                                           e2e::shell_quoted((s.dir / "sweep").string()));
  CHECK(sweep_code == 2);
  CHECK(sweep_s < 5);
  CHECK_THAT(e2e::read_text(s.dir / "log"),
             Catch::Contains("a grid of 2000000 points") && Catch::Contains("expected at most 10000"));
  const auto [plan_code, plan_s] =
      timed("plan " + e2e::shell_quoted(e2e::repo_file("scenarios/paper/online-ds660b.json")) +
            " --max-nodes 1000000 --emit-jobs " + e2e::shell_quoted((s.dir / "plan.sh").string()) +
            " --out " + e2e::shell_quoted((s.dir / "plan").string()));
  CHECK(plan_code == 2);
  CHECK(plan_s < 5);
  CHECK_THAT(e2e::read_text(s.dir / "log"), Catch::Contains("--max-nodes: expected at most 10000"));
}
