// Each `dpsim` subcommand lives in its own file and registers itself on the CLI11 app. A command sets
// `*exit_code` (0 ok, 1 check failed, 2 bad input) from its callback.
#pragma once

#include <CLI/CLI.hpp>

namespace sim::cli {

void add_run_command(CLI::App& app, int* exit_code);         // run_cmd.cpp
void add_demo_command(CLI::App& app, int* exit_code);        // demo_cmd.cpp
void add_bottleneck_command(CLI::App& app, int* exit_code);  // bottleneck_cmd.cpp
void add_trace_command(CLI::App& app, int* exit_code);       // trace_cmd.cpp
void add_bench_command(CLI::App& app, int* exit_code);       // bench_cmd.cpp
void add_sweep_command(CLI::App& app, int* exit_code);       // sweep_cmd.cpp
void add_check_command(CLI::App& app, int* exit_code);       // check_cmd.cpp
void add_compare_command(CLI::App& app, int* exit_code);     // report.cpp
void add_ablation_command(CLI::App& app, int* exit_code);    // ablation_cmd.cpp
void add_capacity_command(CLI::App& app, int* exit_code);    // capacity_cmd.cpp

}  // namespace sim::cli
