#include "sim/study/demo.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"
#include "sim/study/compare.h"
#include "sim/study/executor.h"
#include "sim/study/systems.h"

namespace sim::study {

StatusOr<Outcome> run_demo(const DemoSpec& spec, const Console& console) {
  const std::string path = resolve_path(spec.scenario, "");
  auto sc = config::load_scenario(path, spec.sets);
  if (!sc) return sc.status();
  const auto& hw = sc->prefill_hardware;  // the paper's scenario: one file
  const auto range = cost::bottleneck_range(cost::bottleneck_inputs(hw, sc->cluster.de_buffer));
  if (!range) return range.status();
  console.out(
      fmt::format(
          "hardware {}: g = {} GPUs/node, B = {:.0f} GB/s per CNIC, s*B = {:.0f} GB/s SNIC, M = {:.0f} "
          "GB/s DRAM\n",
          hw.name, hw.gpus_per_node, hw.cnic_bw_Bps / 1e9, hw.snic_bw_Bps / 1e9, hw.dram_bw_Bps / 1e9) +
      fmt::format("bottleneck-free range (DualPath section 4.2): {} <= P/D <= {}\n",
                  cost::simple_fraction(range->pd_min), cost::simple_fraction(range->pd_max)) +
      fmt::format("scenario {}: {}, {}P{}D, {} agents\n\n", sc->name, sc->model.name,
                  sc->cluster.prefill_nodes, sc->cluster.decode_nodes, sc->workload.agents));

  const std::vector<std::pair<std::string, std::vector<std::string>>> variants = {
      {"Basic", kBasic}, {"DualPath", kDualPath}, {"Oracle", kOracle}};
  Executor ex(1, console);
  ex.shield_interrupts();
  std::vector<std::string> names;
  std::vector<nlohmann::json> results;
  for (const auto& [name, extra] : variants) {
    ChildJob job{
        name, {self_exe(), "run", path, "--quiet", "--out", spec.out_dir + "/" + name + ".json"}, "", "", ""};
    job.result = job.args.back();
    for (const auto& s : spec.sets) job.args.insert(job.args.end(), {"--set", s});
    for (const auto& s : extra) job.args.insert(job.args.end(), {"--set", s});
    job.args.insert(job.args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
    console.err(fmt::format("running {} ...\n", name));
    if (ex.run({job}, OnEnd())[0].code != 0)
      return Status::error(fmt::format("the {} run failed: {}", name, shell_line(job.args)));
    std::ifstream in(job.result);
    names.push_back(name);
    results.push_back(nlohmann::json::parse(in));
  }
  return Outcome{compare_table(names, results) +
                 fmt::format("\nresults: {}/{{Basic,DualPath,Oracle}}.json\n", spec.out_dir)};
}

}  // namespace sim::study
