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

// A long engine inside every bound (models/engine/README.md, "Bounds, and why"): every prefill kernel at
// 1% of its peak and the experts at 1% balancedness. A pass lasts longer than the stall timeout (600
// simulated s) and the 64 agents' 10,321 turns about 4.3 M simulated s: work in progress, not a stall.
const std::string kLongEngineScenario = e2e::repo_file("scenarios/paper/ds660b-64k.json");
const std::vector<std::string> kLongEngine = {
    "workload.agents=64",
    "engine_overrides.kernels.gemm=0.01",
    "engine_overrides.kernels.prefill_efficiency=0.01",
    "engine_overrides.kernels.prefill_attention_mqa=0.01",
    "engine_overrides.kernels.prefill_attention_mha=0.01",
    "engine_overrides.kernels.prefill_experts=0.01",
    "engine_overrides.experts.balance=no_balancer",
    R"(engine_overrides.experts.no_balancer={"ep_gpus":[8,16,32,64],"balancedness":[0.01,0.01,0.01,0.01]})"};

struct Interrupted {
  double stop_wall_s = -1;  // from the signal to the process's exit
  int exit_code = -1;
  std::string stderr_text;
  nlohmann::json result;
  int files_in_out_dir = 0;
};

Interrupted run_and_signal(int sig, const std::string& scenario = kLong,
                           const std::vector<std::string>& sets = {}) {
  e2e::Scratch scratch;
  REQUIRE_FALSE(scratch.dir.empty());
  const fs::path out = scratch.dir / "out.json";
  const fs::path err = scratch.dir / "stderr.txt";
  const std::string exe = e2e::dpsim_binary();
  std::vector<std::string> args = {exe, "run", scenario, "--quiet", "--out", out.string()};
  for (const auto& set : sets) {
    args.push_back("--set");
    args.push_back(set);
  }
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
  std::chrono::steady_clock::time_point sent;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(300)) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (e2e::read_text(err).find("  sim ") != std::string::npos) {
      kill(pid, sig);
      sent = std::chrono::steady_clock::now();
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
  if (signalled)
    r.stop_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
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

// Every run ends on time (README, "Robustness"): a signal during a run whose passes outlast the stall
// timeout stops it within 2 s of wall time, and the work in flight then ends within 60 simulated s.
TEST_CASE("Interrupt: SIGTERM during a long engine's passes -> stopped within 2 s of wall time", "[e2e]") {
  const Interrupted r = run_and_signal(SIGTERM, kLongEngineScenario, kLongEngine);
  INFO(r.stderr_text);
  CHECK(r.exit_code == 143);
  CHECK(r.stop_wall_s < 2.0);
  REQUIRE(r.result.is_object());
  const auto& s = r.result.at("summary");
  CHECK(s.at("stopped_by") == "SIGTERM");
  CHECK(s.at("sim_end_s").get<double>() >= s.at("stopped_at_s").get<double>());
  CHECK(s.at("sim_end_s").get<double>() <= s.at("stopped_at_s").get<double>() + 60 + 1e-6);
  CHECK(r.files_in_out_dir == 1);
}

// The same engine under a time limit: passes longer than the stall timeout are not a deadlock (before,
// the run stopped at 872 s as a "stall" with sim_end_s at 16,591 s); the limit stops it, the work in flight
// ends within 60 s, and the run's 100,000 s keep their series within 2,048 points (sim/core/series_bound.h):
// at 80 s, where each link's points still add up to its bytes.
TEST_CASE("Time limit: a long engine's passes are work, not a stall, and the run ends by its limit",
          "[e2e]") {
  std::vector<std::string> sets = kLongEngine;
  sets.push_back("sim.time_limit_s=100000");
  const e2e::Run run = e2e::run_dpsim(kLongEngineScenario, sets, 60);
  INFO(run.stderr_text);
  CHECK(run.exit_code == 0);
  CHECK(run.wall_s < 10 * e2e::timeout_scale());  // a sanitizer build runs about 10 times slower
  REQUIRE(run.result.is_object());
  const auto& s = run.result.at("summary");
  CHECK(s.at("stopped_by") == "time_limit");
  CHECK(s.at("stopped_at_s").get<double>() == 100000);
  CHECK(s.at("sim_end_s").get<double>() <= 100060 + 1e-6);
  // The prefill GPUs computed nearly all the time: the passes ran, none was taken for a deadlock.
  CHECK(run.result.at("resource_classes").at("prefill.gpu.compute").get<double>() > 0.9);
  const double interval = s.at("series_interval_s").get<double>();
  CHECK(interval == 80);
  int links_checked = 0;
  for (const auto& e : run.result.at("resources").at("cnic")) {
    const auto& series = e.at("series");
    CHECK(series.size() <= 2048);
    double sum = 0;
    for (const auto& p : series) sum += p.get<double>();
    const double bytes = e.at("bytes").get<double>(), bw = e.at("bandwidth_Bps").get<double>();
    if (bytes < 1e9) continue;
    // The points cover every whole 80 s interval: the bytes of the last partial one are not in them.
    CHECK(sum * interval * bw == Approx(bytes).epsilon(0.01));
    links_checked++;
  }
  CHECK(links_checked > 0);
}
