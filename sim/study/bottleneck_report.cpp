#include "sim/study/bottleneck_report.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <utility>

#include "sim/config/hardware.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"

namespace sim::study {

namespace {

// "hopper-8x400g" -> models/hardware/hopper-8x400g.json; anything with a '/' or ".json" is a path.
std::string hardware_path(const std::string& arg) {
  std::string path = arg;
  if (arg.find('/') == std::string::npos && arg.find(".json") == std::string::npos)
    path = "models/hardware/" + arg + ".json";
  return resolve_path(path, "");
}

}  // namespace

StatusOr<Outcome> bottleneck_report(const BottleneckSpec& a) {
  StatusOr<config::HardwareSpec> hw = config::load_hardware(hardware_path(a.hardware));
  if (!hw) return hw.status();
  StatusOr<config::HardwareSpec> dhw = hw;
  if (!a.decode_hw.empty()) dhw = config::load_hardware(hardware_path(a.decode_hw));
  if (!dhw) return Status::error("--decode-hw: " + dhw.status().message());
  const bool two = dhw->file != hw->file;
  config::DeBuffer de_buffer = config::DeBuffer::kDram;
  if (a.de_buffer == config::name(config::DeBuffer::kHbm)) {
    de_buffer = config::DeBuffer::kHbm;
  } else if (a.de_buffer != config::name(config::DeBuffer::kDram)) {
    return Status::error(fmt::format("--de-buffer: expected one of dram, hbm, got \"{}\"", a.de_buffer));
  }
  StatusOr<cost::BottleneckRange> range =
      two ? cost::bottleneck_range(cost::sided_inputs(*hw, *dhw, de_buffer))
          : cost::bottleneck_range(cost::bottleneck_inputs(*hw, de_buffer));
  if (!range)
    return Status::error(hw->file + (two ? " and " + dhw->file : "") + ": " + range.status().message());
  std::unique_ptr<cost::LinkLoads> loads;
  if (a.have_point) {
    const std::pair<const char*, double> counts[] = {{"--p", a.p}, {"--d", a.d}};
    for (const auto& [flag, v] : counts)
      if (!std::isfinite(v) || v <= 0)
        return Status::error(fmt::format("{}: expected a number of nodes > 0, got {:g}", flag, v));
    loads = std::make_unique<cost::LinkLoads>(cost::ideal_link_loads(range->sides, a.p, a.d));
  }
  if (a.json) {
    nlohmann::json j = cost::to_json(*range, loads.get());
    j["hardware"] = {{"name", hw->name}, {"file", hw->file}};
    if (two) j["hardware_decode"] = {{"name", dhw->name}, {"file", dhw->file}};
    return Outcome{j.dump(2) + "\n"};
  }
  std::string out = two ? fmt::format("hardware: prefill nodes {} ({}), decode nodes {} ({})\n", hw->name,
                                      hw->file, dhw->name, dhw->file)
                        : fmt::format("hardware: {} ({})\n", hw->name, hw->file);
  for (const config::HardwareSpec* h : {&*hw, &*dhw}) {
    if (!(two || h == &*hw)) continue;
    if (h->storage_efficiency != 1.0 || h->storage_bw_per_node_Bps > 0 || h->storage_request_overhead_s > 0) {
      out += fmt::format(
          "note: {}storage.efficiency = {:.6g}, storage.request_overhead_s = {:.6g} and "
          "storage.bw_per_node_Bps = "
          "{:.6g} are ignored: the analysis assumes every SNIC is saturated at its line rate s*B (paper "
          "§4.2)\n",
          two ? fmt::format("{}: ", h->name) : "", h->storage_efficiency, h->storage_request_overhead_s,
          h->storage_bw_per_node_Bps);
    }
  }
  return Outcome{out + cost::format_table(*range, loads.get())};
}

}  // namespace sim::study
