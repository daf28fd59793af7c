#include "sim/study/bottleneck_report.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <utility>

#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/config/scenario.h"
#include "sim/config/units.h"
#include "sim/core/paths.h"
#include "sim/cost/bottleneck.h"

namespace sim::study {

namespace {

// A name under models/<kind>/ or a path (model_file_reference), resolved from the working directory, then
// the project root.
std::string file_path(const std::string& arg, const char* kind) {
  return resolve_path(model_file_reference(arg, kind), "");
}
std::string hardware_path(const std::string& arg) {
  return file_path(arg, "hardware");
}

// The P:D splits of whole deployment units, as a scenario with the model and these files would accept
// them (config::check_units: units that split each role and hold the weights), with P + D <= max_nodes.
struct UnitSplits {
  std::string model_name, model_file;
  int prefill_ep_gpus = 0, decode_ep_gpus = 0;  // resolved (0 = one unit spanning the role)
  int prefill_step = 1, decode_step = 1;        // nodes per unit (1 for units within a node)
  int max_nodes = 0;
  std::vector<std::pair<int, int>> in_range;  // (P, D), by P + D, then P
  int outside = 0;                            // whole-unit splits outside the range
};

StatusOr<UnitSplits> unit_splits(const BottleneckSpec& a, const config::HardwareSpec& hw,
                                 const config::HardwareSpec& dhw, const cost::BottleneckRange& range) {
  if (a.max_nodes < 2)
    return Status::error(fmt::format("--max-nodes: expected a number of nodes >= 2, got {}", a.max_nodes));
  const std::string model_file = file_path(a.model, "llm");
  StatusOr<config::ModelSpec> m = config::load_model(model_file);
  if (!m) return Status::error("--model: " + m.status().message());
  config::ScenarioConfig sc;
  sc.file = "dpsim bottleneck";
  sc.model = *m;
  sc.model_file = model_file;
  sc.prefill_hardware = hw;
  sc.decode_hardware = dhw;
  sc.prefill_hardware_file = hw.file;
  sc.decode_hardware_file = dhw.file;
  sc.cluster.prefill_ep_gpus = a.prefill_ep_gpus;
  sc.cluster.decode_ep_gpus = a.decode_ep_gpus;
  config::resolve_units(sc);
  UnitSplits out;
  out.model_name = m->name;
  out.model_file = model_file;
  out.prefill_ep_gpus = sc.cluster.prefill_ep_gpus;
  out.decode_ep_gpus = sc.cluster.decode_ep_gpus;
  out.prefill_step = config::unit_nodes(out.prefill_ep_gpus, hw.gpus_per_node);
  out.decode_step = config::unit_nodes(out.decode_ep_gpus, dhw.gpus_per_node);
  out.max_nodes = a.max_nodes;
  // A unit size that no count accepts (one that is not a divisor or multiple of a node, or too small for
  // the weights) is reported as the scenario loader reports it, at one unit per role.
  sc.cluster.prefill_nodes = out.prefill_step;
  sc.cluster.decode_nodes = out.decode_step;
  Status first_error = config::check_units(sc);
  bool any = false;
  for (int n = 2; n <= a.max_nodes; ++n) {
    for (int p = 1; p < n; ++p) {
      sc.cluster.prefill_nodes = p;
      sc.cluster.decode_nodes = n - p;
      if (!config::check_units(sc).is_ok()) continue;
      any = true;
      const double ratio = static_cast<double>(p) / (n - p);
      // The bounds are ratios of small integers computed in doubles: a split on a bound is in.
      const double eps = 1e-9;
      if (range.feasible && ratio >= range.pd_min * (1 - eps) && ratio <= range.pd_max * (1 + eps))
        out.in_range.emplace_back(p, n - p);
      else
        out.outside++;
    }
  }
  if (!any) {
    if (!first_error.is_ok()) return first_error;
    return Status::error(
        fmt::format("--max-nodes: no split of at most {} nodes is made of whole units of {} "
                    "(prefill units of {} node(s), decode units of {})",
                    a.max_nodes, m->name, out.prefill_step, out.decode_step));
  }
  return out;
}

std::string unit_text(int ep_gpus, int step) {
  if (ep_gpus == 0) return "one unit spanning the role";
  if (step == 1) return fmt::format("units of {} GPU{} (any node count)", ep_gpus, ep_gpus == 1 ? "" : "s");
  return fmt::format("units of {} GPUs ({} nodes)", ep_gpus, step);
}

std::string format_splits(const UnitSplits& u) {
  std::string out = fmt::format(
      "\ndeployment units of {} ({}): prefill {}; decode {}\n"
      "P:D splits of whole units inside the range, P + D <= {} nodes:\n",
      u.model_name, u.model_file, unit_text(u.prefill_ep_gpus, u.prefill_step),
      unit_text(u.decode_ep_gpus, u.decode_step), u.max_nodes);
  if (u.in_range.empty()) out += "  none\n";
  size_t i = 0;
  while (i < u.in_range.size()) {
    const int n = u.in_range[i].first + u.in_range[i].second;
    std::string line = fmt::format("  {:>4} nodes:", n);
    for (; i < u.in_range.size() && u.in_range[i].first + u.in_range[i].second == n; ++i)
      line += fmt::format(" {}P{}D", u.in_range[i].first, u.in_range[i].second);
    out += line + "\n";
  }
  out += fmt::format("  ({} more whole-unit split(s) of at most {} nodes lie outside the range)\n", u.outside,
                     u.max_nodes);
  return out;
}

nlohmann::json splits_json(const UnitSplits& u) {
  nlohmann::json splits = nlohmann::json::array();
  for (const auto& [p, d] : u.in_range) splits.push_back({{"p", p}, {"d", d}});
  return {{"model", {{"name", u.model_name}, {"file", u.model_file}}},
          {"prefill_ep_gpus", u.prefill_ep_gpus},
          {"decode_ep_gpus", u.decode_ep_gpus},
          {"prefill_unit_nodes", u.prefill_step},
          {"decode_unit_nodes", u.decode_step},
          {"max_nodes", u.max_nodes},
          {"splits_in_range", splits},
          {"splits_outside_range", u.outside}};
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
  std::unique_ptr<UnitSplits> units;
  if (!a.model.empty()) {
    StatusOr<UnitSplits> u = unit_splits(a, *hw, *dhw, *range);
    if (!u) return u.status();
    units = std::make_unique<UnitSplits>(std::move(*u));
  } else if (a.prefill_ep_gpus >= 0 || a.decode_ep_gpus >= 0) {
    return Status::error("--prefill-ep-gpus and --decode-ep-gpus need --model");
  }
  if (a.json) {
    nlohmann::json j = cost::to_json(*range, loads.get());
    if (units) j["units"] = splits_json(*units);
    j["hardware"] = {{"name", hw->name}, {"file", hw->file}};
    if (two) j["hardware_decode"] = {{"name", dhw->name}, {"file", dhw->file}};
    return Outcome{j.dump(2) + "\n"};
  }
  std::string out = two ? fmt::format("hardware: prefill nodes {} ({}), decode nodes {} ({})\n", hw->name,
                                      hw->file, dhw->name, dhw->file)
                        : fmt::format("hardware: {} ({})\n", hw->name, hw->file);
  for (const config::HardwareSpec* h : {&*hw, &*dhw}) {
    if (!(two || h == &*hw)) continue;
    if (h->storage_bw_per_node_Bps > 0) {
      out += fmt::format(
          "note: {}storage.bw_per_node_Bps = {:.6g} is ignored: the analysis assumes every SNIC is saturated "
          "at its line rate s*B (paper §4.2)\n",
          two ? fmt::format("{}: ", h->name) : "", h->storage_bw_per_node_Bps);
    }
  }
  out += cost::format_table(*range, loads.get());
  if (units) out += format_splits(*units);
  return Outcome{out};
}

}  // namespace sim::study
