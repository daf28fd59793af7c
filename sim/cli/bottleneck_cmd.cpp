// `dpsim bottleneck HARDWARE [--de-buffer dram|hbm] [--json] [--p P --d D]`: the analytic bottleneck-free
// P/D range of DualPath §4.2 (sim/cost/bottleneck.h) for one hardware file, with the DE buffer in DRAM
// (the paper's) or in HBM (cluster.de_buffer = hbm); with P and D also the ideal per-link loads there.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "sim/cli/commands.h"
#include "sim/config/hardware.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"

namespace sim::cli {

namespace {

struct BottleneckArgs {
  std::string hardware;
  std::string de_buffer = config::name(config::DeBuffer::kDram);
  bool json = false;
  double p = 0;
  double d = 0;
  bool have_point = false;
};

// "hopper-8x400g" -> models/hardware/hopper-8x400g.json; anything with a '/' or ".json" is a path.
std::string hardware_path(const std::string& arg) {
  std::string path = arg;
  if (arg.find('/') == std::string::npos && arg.find(".json") == std::string::npos) {
    path = "models/hardware/" + arg + ".json";
  }
  return resolve_path(path, "");
}

int run_bottleneck(const BottleneckArgs& a) {
  StatusOr<config::HardwareSpec> hw = config::load_hardware(hardware_path(a.hardware));
  if (!hw) {
    std::fprintf(stderr, "%s\n", hw.status().message().c_str());
    return 2;
  }
  config::DeBuffer de_buffer = config::DeBuffer::kDram;
  if (a.de_buffer == config::name(config::DeBuffer::kHbm)) {
    de_buffer = config::DeBuffer::kHbm;
  } else if (a.de_buffer != config::name(config::DeBuffer::kDram)) {
    std::fprintf(stderr, "--de-buffer: expected one of dram, hbm, got \"%s\"\n", a.de_buffer.c_str());
    return 2;
  }
  StatusOr<cost::BottleneckRange> range = cost::bottleneck_range(cost::bottleneck_inputs(*hw, de_buffer));
  if (!range) {
    std::fprintf(stderr, "%s: %s\n", hw->file.c_str(), range.status().message().c_str());
    return 2;
  }
  std::unique_ptr<cost::LinkLoads> loads;
  if (a.have_point) {
    const std::pair<const char*, double> counts[] = {{"--p", a.p}, {"--d", a.d}};
    for (const auto& [flag, v] : counts) {
      if (!std::isfinite(v) || v <= 0) {
        std::fprintf(stderr, "%s: expected a number of nodes > 0, got %g\n", flag, v);
        return 2;
      }
    }
    const cost::BottleneckInputs& in = range->in;
    loads = std::make_unique<cost::LinkLoads>(
        cost::ideal_link_loads(in.g, in.cnic_Bps, in.snic_Bps, in.dram_Bps, a.p, a.d, in.de_buffer));
  }

  if (a.json) {
    nlohmann::json j = cost::to_json(*range, loads.get());
    j["hardware"] = {{"name", hw->name}, {"file", hw->file}};
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
    return 0;
  }
  std::string out = fmt::format("hardware: {} ({})\n", hw->name, hw->file);
  if (hw->storage_efficiency != 1.0 || hw->storage_bw_per_node_Bps > 0 ||
      hw->storage_request_overhead_s > 0) {
    out += fmt::format(
        "note: storage.efficiency = {:.6g}, storage.request_overhead_s = {:.6g} and storage.bw_per_node_Bps "
        "= "
        "{:.6g} are ignored: the analysis assumes every SNIC is saturated at its line rate s*B (paper "
        "§4.2)\n",
        hw->storage_efficiency, hw->storage_request_overhead_s, hw->storage_bw_per_node_Bps);
  }
  out += cost::format_table(*range, loads.get());
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

void add_bottleneck_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BottleneckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bottleneck",
      "Analytic bottleneck-free P/D range (DualPath §4.2, inequalities (1)-(9)) of a hardware file");
  cmd->add_option("hardware", args->hardware,
                  "hardware JSON path, or a name under models/hardware/ (e.g. hopper-8x400g)")
      ->required();
  cmd->add_option("--de-buffer", args->de_buffer,
                  "where the DE buffer is: dram (the paper's, inequalities (1)-(9)) or hbm (GPUDirect into "
                  "the DE GPU's HBM, (H1)-(H7) of sim/README.md); as the scenario field cluster.de_buffer")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the result as JSON on stdout");
  CLI::Option* p =
      cmd->add_option("--p", args->p, "prefill nodes P: also print the ideal link loads at P, D");
  CLI::Option* d = cmd->add_option("--d", args->d, "decode nodes D (with --p)");
  p->needs(d);
  d->needs(p);
  cmd->callback([args, exit_code, p]() {
    args->have_point = p->count() > 0;
    *exit_code = run_bottleneck(*args);
  });
}

}  // namespace sim::cli
