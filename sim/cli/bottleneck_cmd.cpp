// `dpsim bottleneck HARDWARE [--decode-hw DECODE_HW] [--de-buffer dram|hbm] [--json] [--p P --d D]`: the
// analytic bottleneck-free P/D range of DualPath §4.2 (sim/cost/bottleneck.h) for one hardware file, or for
// prefill nodes of HARDWARE and decode nodes of DECODE_HW (the per-role form), with the DE buffer in DRAM
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
  std::string decode_hw;  // "" = the same file
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
  StatusOr<config::HardwareSpec> dhw = hw;
  if (!a.decode_hw.empty()) dhw = config::load_hardware(hardware_path(a.decode_hw));
  if (!dhw) {
    std::fprintf(stderr, "--decode-hw: %s\n", dhw.status().message().c_str());
    return 2;
  }
  const bool two = dhw->file != hw->file;
  config::DeBuffer de_buffer = config::DeBuffer::kDram;
  if (a.de_buffer == config::name(config::DeBuffer::kHbm)) {
    de_buffer = config::DeBuffer::kHbm;
  } else if (a.de_buffer != config::name(config::DeBuffer::kDram)) {
    std::fprintf(stderr, "--de-buffer: expected one of dram, hbm, got \"%s\"\n", a.de_buffer.c_str());
    return 2;
  }
  StatusOr<cost::BottleneckRange> range =
      two ? cost::bottleneck_range(cost::sided_inputs(*hw, *dhw, de_buffer))
          : cost::bottleneck_range(cost::bottleneck_inputs(*hw, de_buffer));
  if (!range) {
    std::fprintf(stderr, "%s%s%s: %s\n", hw->file.c_str(), two ? " and " : "", two ? dhw->file.c_str() : "",
                 range.status().message().c_str());
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
    loads = std::make_unique<cost::LinkLoads>(cost::ideal_link_loads(range->sides, a.p, a.d));
  }

  if (a.json) {
    nlohmann::json j = cost::to_json(*range, loads.get());
    j["hardware"] = {{"name", hw->name}, {"file", hw->file}};
    if (two) j["hardware_decode"] = {{"name", dhw->name}, {"file", dhw->file}};
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
    return 0;
  }
  std::string out = two ? fmt::format("hardware: prefill nodes {} ({}), decode nodes {} ({})\n", hw->name,
                                      hw->file, dhw->name, dhw->file)
                        : fmt::format("hardware: {} ({})\n", hw->name, hw->file);
  for (const config::HardwareSpec* h : {&*hw, &*dhw}) {
    if (two || h == &*hw)
      if (h->storage_efficiency != 1.0 || h->storage_bw_per_node_Bps > 0 ||
          h->storage_request_overhead_s > 0) {
        out += fmt::format(
            "note: {}storage.efficiency = {:.6g}, storage.request_overhead_s = {:.6g} and "
            "storage.bw_per_node_Bps = "
            "{:.6g} are ignored: the analysis assumes every SNIC is saturated at its line rate s*B (paper "
            "§4.2)\n",
            two ? fmt::format("{}: ", h->name) : "", h->storage_efficiency, h->storage_request_overhead_s,
            h->storage_bw_per_node_Bps);
      }
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
      "Analytic bottleneck-free P/D range (DualPath §4.2, inequalities (1)-(9)) of a hardware file, or of "
      "one per role");
  cmd->add_option("hardware", args->hardware,
                  "hardware JSON path, or a name under models/hardware/ (e.g. hopper-8x400g); with "
                  "--decode-hw, the prefill nodes'")
      ->required();
  cmd->add_option(
      "--decode-hw", args->decode_hw,
      "the decode nodes' hardware file (path or name), as the scenario field hardware_decode: the "
      "per-role inequalities of sim/README.md");
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
