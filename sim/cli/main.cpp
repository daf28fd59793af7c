// dpsim: command-line entry point. Subcommands register themselves (see commands.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "sim/cli/commands.h"

// tcmalloc's C interface, when the build links it (CMakeLists.txt, DPSIM_TCMALLOC); null otherwise.
extern "C" int MallocExtension_SetNumericProperty(const char* property, size_t value) __attribute__((weak));

namespace {

int run_cli(int argc, char** argv) {
  // Freed memory goes back to the system at once instead of staying in tcmalloc's caches: without it the
  // peak memory of a 48P96D run grows from 0.77 GB (glibc) to 1.15 GB.
  if (MallocExtension_SetNumericProperty != nullptr)
    MallocExtension_SetNumericProperty("tcmalloc.aggressive_memory_decommit", 1);
  CLI::App app{
      "dpsim: a discrete-event simulator of PD-disaggregated LLM inference with storage-loaded KV cache"};
  app.require_subcommand(1);
  int exit_code = 0;
  sim::cli::add_run_command(app, &exit_code);
  sim::cli::add_demo_command(app, &exit_code);
  sim::cli::add_bottleneck_command(app, &exit_code);
  sim::cli::add_trace_command(app, &exit_code);
  sim::cli::add_bench_command(app, &exit_code);
  sim::cli::add_sweep_command(app, &exit_code);
  sim::cli::add_check_command(app, &exit_code);
  sim::cli::add_compare_command(app, &exit_code);
  sim::cli::add_ablation_command(app, &exit_code);
  sim::cli::add_capacity_command(app, &exit_code);
  sim::cli::add_props_command(app, &exit_code);
  sim::cli::add_plan_command(app, &exit_code);
  sim::cli::add_calibrate_command(app, &exit_code);
  sim::cli::add_model_command(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // A bad command line: one line with every command's prefix, then where to look.
    std::fprintf(stderr, "dpsim: %s\nRun with --help for more information.\n", e.what());
    return 2;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing should get here (errors travel as Status values): a defect, said on one line with its own code
  // (README, "Robustness") instead of std::terminate's abort.
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dpsim: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "dpsim: internal error: an exception of unknown type\n");
  }
  return 70;
}
