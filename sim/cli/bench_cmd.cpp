// `dpsim bench [SCENARIO|DIR]... [--out FILE]` (what `make bench` runs): simulator speed on benchmark
// scenarios (sim/study/bench.h).
#include "sim/cli/commands.h"
#include "sim/study/bench.h"

namespace sim::cli {

void add_bench_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("bench", "Measure simulator speed on benchmark scenarios");
  static study::BenchSpec a;
  cmd->add_option("scenarios", a.inputs, "Scenario files or directories")->capture_default_str();
  cmd->add_option("--out", a.out, "Benchmark JSON")->capture_default_str();
  cmd->add_option("--set", a.sets, "Overrides applied to every scenario");
  cmd->add_option("--base", a.base,
                  "Scenario (file stem) the others' us per turn are a ratio of (default: the first)");
  cmd->callback([exit_code]() { *exit_code = finish(study::run_bench(a, stdio_console())); });
}

}  // namespace sim::cli
