// SIGINT / SIGTERM during `dpsim run` (sim/engine/interrupt.h): the run stops at its next check and
// writes the results so far, marked incomplete, atomically; the exit code is 128 + the signal.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/support.h"

namespace fs = std::filesystem;

extern char** environ;

namespace {

// DS 660B 2P4D with 2048 agents: about 10 s of wall time in a release build. The signal goes out once the
// simulation runs: when its progress line ("  sim <t> s  turns ...", printed from 3 s of wall time on)
// shows up on stderr, so a loaded machine cannot make it land during start-up.
const std::string kLong = e2e::repo_file("scenarios/bench/ds660b-2p4d-2048-dualpath.json");

struct Interrupted {
  int exit_code = -1;
  std::string stderr_text;
  nlohmann::json result;
  int files_in_out_dir = 0;
};

Interrupted run_and_signal(int sig) {
  e2e::Scratch scratch;
  REQUIRE_FALSE(scratch.dir.empty());
  const fs::path out = scratch.dir / "out.json";
  const fs::path err = scratch.dir / "stderr.txt";
  const std::string exe = e2e::dpsim_binary();
  std::vector<std::string> args = {exe, "run", kLong, "--quiet", "--out", out.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  int status = 0;
  bool signalled = false, exited = false;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(300)) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (e2e::read_text(err).find("  sim ") != std::string::npos) {
      kill(pid, sig);
      signalled = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!exited && !signalled) kill(pid, SIGKILL);
  if (!exited) waitpid(pid, &status, 0);
  INFO(e2e::read_text(err));
  REQUIRE(signalled);  // the run was still going when its progress line appeared
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
  const Interrupted r = run_and_signal(SIGTERM);
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
  const Interrupted r = run_and_signal(SIGINT);
  INFO(r.stderr_text);
  CHECK(r.exit_code == 130);
  REQUIRE(r.result.is_object());
  CHECK_FALSE(r.result.at("complete").get<bool>());
  CHECK(r.result.at("summary").at("stopped_by") == "SIGINT");
}
