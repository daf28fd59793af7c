// `dpsim bench [SCENARIO|DIR]... [--out FILE]` (what `make bench` runs): runs each scenario as a child
// `dpsim run` and reports simulator speed: agent-turns per wall-second, simulated seconds per wall-second,
// SimGrid activities per turn and at peak in flight, and the child's CPU seconds and peak RSS. Writes a JSON
// atomically.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/study/executor.h"
#include "sim/cli/commands.h"
#include "sim/core/paths.h"

namespace sim::cli {

using namespace study;  // the studies moved to sim/study/; the commands are made thin next

namespace fs = std::filesystem;

namespace {

struct Child {
  int status = -1;
  double max_rss_bytes = 0;
  double cpu_s = 0;  // user + system
};

// Runs argv[0] with `args`, waits, returns its status and peak RSS (from wait4's rusage).
Child run_child(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Child c;
  const pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  struct rusage ru {};
  if (pid > 0 && wait4(pid, &c.status, 0, &ru) == pid) {
    c.max_rss_bytes = ru.ru_maxrss * 1024.0;
    c.cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  }
  return c;
}

std::vector<std::string> expand(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    const std::string p = resolve_path(in, "");
    if (fs::is_directory(p)) {
      std::vector<std::string> dir;
      for (const auto& e : fs::directory_iterator(p))
        if (e.path().extension() == ".json") dir.push_back(e.path().string());
      std::sort(dir.begin(), dir.end());
      files.insert(files.end(), dir.begin(), dir.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

}  // namespace

void add_bench_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("bench", "Measure simulator speed on benchmark scenarios");
  static std::vector<std::string> inputs = {"scenarios/bench"};
  static std::string out = "out/bench.json";
  static std::vector<std::string> sets;
  cmd->add_option("scenarios", inputs, "Scenario files or directories")->capture_default_str();
  cmd->add_option("--out", out, "Benchmark JSON")->capture_default_str();
  cmd->add_option("--set", sets, "Overrides applied to every scenario");
  cmd->callback([exit_code]() {
    std::error_code ec;
    const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
    nlohmann::json report = nlohmann::json::array();
    std::printf("%-34s %8s %8s %9s %9s %8s %10s %8s %9s %8s %8s %9s\n", "scenario", "wall s", "CPU s",
                "turns", "turns/s", "us/turn", "sim-s/wall", "act/turn", "act/s", "peak act", "RSS MiB",
                "JCT s");
    for (const auto& file : expand(inputs)) {
      const std::string res = "out/bench/" + fs::path(file).stem().string() + ".json";
      std::vector<std::string> args = {self,    "run", file,    "--quiet",
                                       "--out", res,   "--set", "sim.progress=false"};
      for (const auto& s : sets) args.insert(args.end(), {"--set", s});
      args.insert(args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
      const Child c = run_child(args);
      if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
        std::fprintf(stderr, "dpsim: bench: %s failed (status %d)\n", file.c_str(), c.status);
        *exit_code = 2;
        return;
      }
      std::ifstream in(res);
      const nlohmann::json r = nlohmann::json::parse(in);
      const auto& ri = r["run_info"];
      const double turns = r["summary"]["turns_completed"].get<double>();
      const double wall = ri["wall_s"].get<double>();
      const double per_turn = turns > 0 ? ri["activities"].get<double>() / turns : 0;
      const double us_per_turn = turns > 0 ? 1e6 * wall / turns : 0;
      nlohmann::json row = {{"scenario", file},
                            {"wall_s", wall},
                            {"cpu_s", c.cpu_s},
                            {"turns", r["summary"]["turns_completed"]},
                            {"turns_per_wall_s", ri["turns_per_wall_s"]},
                            {"wall_us_per_turn", us_per_turn},
                            {"sim_s_per_wall_s", ri["sim_s_per_wall_s"]},
                            {"activities_per_turn", per_turn},
                            {"activities_per_wall_s", ri["activities_per_wall_s"]},
                            {"peak_activities_in_flight", ri["peak_activities_in_flight"]},
                            {"peak_rss_bytes", c.max_rss_bytes},
                            {"jct_s", r["summary"]["jct_s"]}};
      report.push_back(row);
      std::printf("%-34s %8.1f %8.1f %9.0f %9.0f %8.1f %10.1f %8.2f %9.0f %8lld %8.0f %9.1f\n",
                  fs::path(file).stem().string().c_str(), wall, c.cpu_s, turns,
                  ri["turns_per_wall_s"].get<double>(), us_per_turn, ri["sim_s_per_wall_s"].get<double>(),
                  per_turn, ri["activities_per_wall_s"].get<double>(),
                  static_cast<long long>(ri["peak_activities_in_flight"].get<int64_t>()),
                  c.max_rss_bytes / 1048576.0, r["summary"]["jct_s"].get<double>());
      std::fflush(stdout);
    }
    const std::string err = write_file_atomically(out, report.dump(1) + "\n");
    if (!err.empty()) {
      std::fprintf(stderr, "dpsim: %s\n", err.c_str());
      *exit_code = 2;
      return;
    }
    std::printf("benchmark: %s\n", out.c_str());
  });
}

}  // namespace sim::cli
