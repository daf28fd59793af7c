// Each `dpsim` subcommand lives in its own file and registers itself on the CLI11 app. A command sets
// `*exit_code` (0 ok, 1 check failed, 2 bad input) from its callback. The commands other than `run` parse
// their options into a spec of sim/study/, call the study and print what it returns.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::cli {

void add_run_command(CLI::App& app, int* exit_code);         // run_cmd.cpp
void add_demo_command(CLI::App& app, int* exit_code);        // demo_cmd.cpp
void add_bottleneck_command(CLI::App& app, int* exit_code);  // bottleneck_cmd.cpp
void add_trace_command(CLI::App& app, int* exit_code);       // trace_cmd.cpp
void add_bench_command(CLI::App& app, int* exit_code);       // bench_cmd.cpp
void add_sweep_command(CLI::App& app, int* exit_code);       // sweep_cmd.cpp
void add_check_command(CLI::App& app, int* exit_code);       // check_cmd.cpp
void add_compare_command(CLI::App& app, int* exit_code);     // compare_cmd.cpp
void add_ablation_command(CLI::App& app, int* exit_code);    // ablation_cmd.cpp
void add_capacity_command(CLI::App& app, int* exit_code);    // capacity_cmd.cpp
void add_props_command(CLI::App& app, int* exit_code);       // props_cmd.cpp
void add_plan_command(CLI::App& app, int* exit_code);        // plan_cmd.cpp
void add_calibrate_command(CLI::App& app, int* exit_code);   // calibrate_cmd.cpp
void add_model_command(CLI::App& app, int* exit_code);       // model_cmd.cpp

// Loads a scenario with its --set overrides. On bad input: "dpsim: <message>" on stderr, *exit_code = 2
// and nullopt, so that a command fails before it runs anything.
inline std::optional<config::ScenarioConfig> load_scenario_or_report(const std::string& path,
                                                                     const std::vector<std::string>& sets,
                                                                     int* exit_code) {
  auto sc = config::load_scenario(path, sets);
  if (sc) return std::move(*sc);
  std::fprintf(stderr, "dpsim: %s\n", sc.status().message().c_str());
  *exit_code = 2;
  return std::nullopt;
}

// A study's console: Console::out to stdout, flushed at once (a row shows as it is measured), Console::err
// to stderr.
inline study::Console stdio_console() {
  return {[](const std::string& s) {
            std::fputs(s.c_str(), stdout);
            std::fflush(stdout);
          },
          [](const std::string& s) { std::fputs(s.c_str(), stderr); }};
}

// Prints how a study ended and returns the exit code: its report on stdout and 0, 1 or 2 by its verdict;
// or "dpsim: <message>" on stderr (every command's error line has that prefix) and 2.
inline int finish(const StatusOr<study::Outcome>& o) {
  if (!o) {
    std::fprintf(stderr, "dpsim: %s\n", o.status().message().c_str());
    return 2;
  }
  std::fputs(o->text.c_str(), stdout);
  switch (o->verdict) {
    case study::Verdict::kPass:
      return 0;
    case study::Verdict::kFail:
      return 1;
    case study::Verdict::kBadInput:
      return 2;
  }
  return 2;
}

}  // namespace sim::cli
