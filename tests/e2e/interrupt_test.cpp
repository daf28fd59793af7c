// SIGINT / SIGTERM during `dpsim run` (sim/engine/interrupt.h): the run stops at its next check and
// writes the results so far, marked incomplete, atomically; the exit code is 128 + the signal.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/e2e/support.h"

namespace fs = std::filesystem;

namespace {

// DS 660B 2P4D with 2048 agents: about 10 s of wall time in a release build, so a signal after
// 3 s lands mid-run (the scenario loads and starts in well under a second).
const std::string kLong = e2e::repo_file("scenarios/bench/ds660b-2p4d-2048-dualpath.json");

struct Interrupted {
  int exit_code = -1;
  std::string stderr_text;
  nlohmann::json result;
  int files_in_out_dir = 0;
};

Interrupted run_and_signal(const char* signal_name, double after_s) {
  e2e::Scratch scratch;
  REQUIRE_FALSE(scratch.dir.empty());
  const fs::path out = scratch.dir / "out.json";
  const fs::path err = scratch.dir / "stderr.txt";
  // timeout --preserve-status sends the signal after `after_s` and exits with dpsim's own status.
  const std::string cmd = "timeout --preserve-status -s " + std::string(signal_name) + " " +
                          std::to_string(after_s) + " " + e2e::shell_quoted(DPSIM_BINARY) + " run " +
                          e2e::shell_quoted(kLong) + " --quiet --out " + e2e::shell_quoted(out.string()) +
                          " >/dev/null 2>" + e2e::shell_quoted(err.string());
  const int status = std::system(cmd.c_str());
  Interrupted r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.stderr_text = e2e::read_text(err);
  if (fs::exists(out)) r.result = e2e::read_json(out.string());
  for (const auto& e : fs::directory_iterator(scratch.dir))
    if (e.path() != err) r.files_in_out_dir++;
  return r;
}

}  // namespace

TEST_CASE("Interrupt: SIGTERM mid-run -> partial results marked incomplete, exit 143", "[e2e]") {
  const Interrupted r = run_and_signal("TERM", 3);
  INFO(r.stderr_text);
  CHECK(r.exit_code == 143);
  REQUIRE(r.result.is_object());
  CHECK(r.stderr_text.find("SIGTERM: stopped at simulated t = ") != std::string::npos);
  CHECK_FALSE(r.result.at("complete").get<bool>());
  const auto& s = r.result.at("summary");
  CHECK(s.at("stopped_by") == "SIGTERM");
  // Stopped part-way: some turns done, not all; the simulated time reached is recorded and consistent.
  CHECK(s.at("turns_completed").get<int64_t>() > 0);
  CHECK(s.at("turns_completed").get<int64_t>() < s.at("turns_total").get<int64_t>());
  CHECK(s.at("stopped_at_s").get<double>() > 0);
  CHECK(s.at("stopped_at_s").get<double>() <= s.at("sim_end_s").get<double>());
  CHECK(s.at("jct_s").get<double>() <= s.at("sim_end_s").get<double>());
  // The partial results still respect link capacities and carry every section.
  for (const char* key : {"resources", "resource_classes", "bottleneck", "balance", "invariants"})
    CHECK(r.result.contains(key));
  for (const auto& [kind, list] : r.result.at("resources").items())
    for (const auto& e : list)
      if (e.contains("peak_utilization")) CHECK(e.at("peak_utilization").get<double>() <= 1 + 1e-6);
  // Atomic write: the results file and nothing else (no temporary left behind).
  CHECK(r.files_in_out_dir == 1);
}

TEST_CASE("Interrupt: SIGINT mid-run -> the same, exit 130", "[e2e]") {
  const Interrupted r = run_and_signal("INT", 3);
  INFO(r.stderr_text);
  CHECK(r.exit_code == 130);
  REQUIRE(r.result.is_object());
  CHECK_FALSE(r.result.at("complete").get<bool>());
  CHECK(r.result.at("summary").at("stopped_by") == "SIGINT");
}
