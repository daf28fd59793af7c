// `dpsim run SCENARIO [--set k=v]... [--out FILE]`: one simulation, a results JSON written atomically, and a
// short table on stdout.
#include <fmt/format.h>

#include <cstdio>

#include "sim/cli/commands.h"
#include "sim/cli/report.h"
#include "sim/config/output_paths.h"
#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/engine/interrupt.h"
#include "sim/run/simulate.h"

namespace sim::cli {

void add_run_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("run", "Run one scenario and write its results JSON");
  static std::string scenario, out;
  static std::vector<std::string> sets;
  static bool quiet = false;
  cmd->add_option("scenario", scenario, "Scenario JSON file")->required();
  cmd->add_option("--set", sets, "Override a field: key.path=value (repeatable)");
  CLI::Option* out_opt =
      cmd->add_option("--out", out, "Results JSON path (default: outputs.results, else out/<name>.json)");
  cmd->add_flag("--quiet", quiet, "Print nothing on stdout");
  cmd->callback([exit_code, out_opt]() {
    auto sc = load_scenario_or_report(scenario, sets, exit_code);
    if (!sc) return;
    const bool given = out_opt->count() > 0;  // --out "" is a path given empty, not no path
    const std::string path = given                          ? out
                             : !sc->outputs.results.empty() ? sc->outputs.results
                                                            : "out/" + sc->name + ".json";
    const std::string flag = given                          ? "--out"
                             : !sc->outputs.results.empty() ? "outputs.results"
                                                            : "the results";
    // No output over an input or another output, and an unwritable results path, fail before the run.
    if (const Status st = config::check_output_paths(*sc, path, flag); !st) {
      std::fprintf(stderr, "dpsim: %s: %s\n", sc->file.c_str(), st.message().c_str());
      *exit_code = 2;
      return;
    }
    if (const std::string err = probe_writable(path); !err.empty()) {
      std::fprintf(stderr, "dpsim: %s: %s\n", given ? "--out" : sc->file.c_str(), err.c_str());
      *exit_code = 2;
      return;
    }
    bool progress_shown = false;
    run::RunOptions options;
    options.on_progress = [&progress_shown](const run::Progress& p) {
      std::fprintf(stderr, "\r  sim %.0f s  turns %lld/%lld  wall %.0f s  ETA %.0f s   ", p.sim_s,
                   static_cast<long long>(p.turns_done), static_cast<long long>(p.turns_total), p.wall_s,
                   p.eta_s);
      progress_shown = true;
    };
    auto run = run::simulate(*sc, options);
    if (progress_shown) std::fprintf(stderr, "\n");
    if (!run) {
      std::fprintf(stderr, "dpsim: %s\n", run.status().message().c_str());
      *exit_code = 2;
      return;
    }
    const nlohmann::json& res = run->json;
    const std::string err = write_file_atomically(path, res.dump(1) + "\n");
    if (!err.empty()) {
      std::fprintf(stderr, "dpsim: %s\n", err.c_str());
      *exit_code = 2;
      return;
    }
    if (!quiet) {
      std::printf("%s", summary_table(res).c_str());
      std::printf("results: %s\n", path.c_str());
    }
    if (run->stopped_by() == "stall") {
      std::fprintf(
          stderr,
          "dpsim: the simulation stalled at simulated t = %.1f s: requests in flight, but no transfer, "
          "compute or finished turn for %.0f s (an engine deadlock: please report it with the "
          "scenario); partial results in %s\n",
          run->stopped_at_s(), engine::kStallTimeoutS, path.c_str());
      *exit_code = 3;
    }
    if (const int sig = engine::stop_signal(); sig != 0) {
      std::fprintf(
          stderr, "dpsim: %s: stopped at simulated t = %.1f s; partial results (\"complete\": false) in %s\n",
          engine::stop_signal_name(), run->stopped_at_s(), path.c_str());
      *exit_code = 128 + sig;
    }
  });
}

}  // namespace sim::cli
