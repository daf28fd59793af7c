// `dpsim demo` (what `make run` runs): the paper's hardware and its bottleneck-free range, then the default
// scenario with Basic (`pe`, no layerwise prefill) and DualPath side by side. Each run is a child process
// (`dpsim run`), since SimGrid runs one simulation per process.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/cli/child_runs.h"
#include "sim/cli/commands.h"
#include "sim/cli/report.h"
#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"

namespace sim::cli {

void add_demo_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("demo", "The default scenario with Basic and DualPath side by side");
  static std::string scenario = "scenarios/paper/ds660b-64k.json";
  static std::vector<std::string> sets = {"workload.agents=512"};
  static std::string out_dir = "out/demo";
  cmd->add_option("--scenario", scenario, "Scenario JSON")->capture_default_str();
  cmd->add_option("--set", sets, "Overrides applied to both runs")->capture_default_str();
  cmd->add_option("--out-dir", out_dir, "Where the two results JSONs go")->capture_default_str();
  cmd->callback([exit_code]() {
    const std::string path = resolve_path(scenario, "");
    auto sc = load_scenario_or_report(path, sets, exit_code);
    if (!sc) return;
    const auto& hw = sc->prefill_hardware;  // the paper's scenario: one file
    const auto range = cost::bottleneck_range(cost::bottleneck_inputs(hw, sc->cluster.de_buffer));
    if (!range) {
      std::fprintf(stderr, "dpsim: %s\n", range.status().message().c_str());
      *exit_code = 2;
      return;
    }
    std::printf(
        "hardware %s: g = %d GPUs/node, B = %.0f GB/s per CNIC, s*B = %.0f GB/s SNIC, M = %.0f GB/s DRAM\n",
        hw.name.c_str(), hw.gpus_per_node, hw.cnic_bw_Bps / 1e9, hw.snic_bw_Bps / 1e9, hw.dram_bw_Bps / 1e9);
    std::printf("bottleneck-free range (DualPath section 4.2): %s <= P/D <= %s\n",
                cost::simple_fraction(range->pd_min).c_str(), cost::simple_fraction(range->pd_max).c_str());
    std::printf("scenario %s: %s, %dP%dD, %d agents\n\n", sc->name.c_str(), sc->model.name.c_str(),
                sc->cluster.prefill_nodes, sc->cluster.decode_nodes, sc->workload.agents);

    const std::vector<std::pair<std::string, std::vector<std::string>>> variants = {
        {"Basic", {"policy.read_path=pe", "policy.layerwise=false"}},
        {"DualPath", {"policy.read_path=dualpath", "policy.layerwise=true"}},
        {"Oracle", {"policy.read_path=oracle", "policy.layerwise=true"}}};
    std::vector<std::string> names;
    std::vector<nlohmann::json> results;
    for (const auto& [name, extra] : variants) {
      const std::string out = out_dir + "/" + name + ".json";
      std::string cmdline =
          shell_quote(self_exe()) + " run " + shell_quote(path) + " --quiet --out " + shell_quote(out);
      for (const auto& s : sets) cmdline += " --set " + shell_quote(s);
      for (const auto& s : extra) cmdline += " --set " + shell_quote(s);
      cmdline += " --set " + shell_quote(kNoTimeline) + " --set " + shell_quote(kNoRequests);
      std::fprintf(stderr, "running %s ...\n", name.c_str());
      if (std::system(cmdline.c_str()) != 0) {
        std::fprintf(stderr, "dpsim: the %s run failed: %s\n", name.c_str(), cmdline.c_str());
        *exit_code = 2;
        return;
      }
      std::ifstream in(out);
      names.push_back(name);
      results.push_back(nlohmann::json::parse(in));
    }
    std::printf("%s", compare_table(names, results).c_str());
    std::printf("\nresults: %s/{Basic,DualPath,Oracle}.json\n", out_dir.c_str());
  });
}

}  // namespace sim::cli
