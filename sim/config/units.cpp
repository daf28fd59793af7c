#include "sim/config/units.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/config/scenario.h"
#include "sim/cost/compute_model.h"

namespace sim::config {

namespace {

int& ep_field(ScenarioConfig& sc, UnitRole r) {
  return r == UnitRole::kPrefill ? sc.cluster.prefill_ep_gpus : sc.cluster.decode_ep_gpus;
}
int ep_field(const ScenarioConfig& sc, UnitRole r) {
  return r == UnitRole::kPrefill ? sc.cluster.prefill_ep_gpus : sc.cluster.decode_ep_gpus;
}
int role_nodes(const ScenarioConfig& sc, UnitRole r) {
  return r == UnitRole::kPrefill ? sc.cluster.prefill_nodes : sc.cluster.decode_nodes;
}

// Whether `gpus` GPUs of one EP group hold the model's weights with room left for KV.
bool weights_fit(const ModelSpec& m, const HardwareSpec& hw, int gpus) {
  return cost::hbm_kv_bytes_per_gpu(m, hw, gpus) > 0;
}

// The unit sizes (GPUs) that split `role_gpus` and hold the weights, ascending.
std::vector<int> valid_sizes(const ModelSpec& m, const HardwareSpec& hw, int role_gpus) {
  std::vector<int> out;
  const int g = hw.gpus_per_node;
  for (int u = 1; u <= role_gpus; ++u)
    if (role_gpus % u == 0 && (g % u == 0 || u % g == 0) && weights_fit(m, hw, u)) out.push_back(u);
  return out;
}

std::string list(const std::vector<int>& xs) {
  if (xs.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i == 0 ? "" : ", ") + std::to_string(xs[i]);
  return s;
}

}  // namespace

const char* name(UnitRole r) {
  return r == UnitRole::kPrefill ? "prefill" : "decode";
}

const HardwareSpec& role_hardware(const ScenarioConfig& sc, UnitRole r) {
  return r == UnitRole::kPrefill ? sc.prefill_hardware : sc.decode_hardware;
}

const std::string& role_hardware_file(const ScenarioConfig& sc, UnitRole r) {
  return r == UnitRole::kPrefill ? sc.prefill_hardware_file : sc.decode_hardware_file;
}

void resolve_units(ScenarioConfig& sc) {
  const ModelSpec& m = sc.model;
  for (UnitRole r : {UnitRole::kPrefill, UnitRole::kDecode}) {
    int& f = ep_field(sc, r);
    if (m.weight_shards == 1) {
      if (f < 0) f = 1;  // a whole model per GPU: a unit is one GPU (check_units refuses anything else)
    } else if (f < 0) {
      f = r == UnitRole::kPrefill ? m.prefill_ep_gpus : m.decode_ep_gpus;
    }
  }
}

int unit_gpus(const ScenarioConfig& sc, UnitRole r) {
  return unit_gpus(ep_field(sc, r), role_nodes(sc, r) * role_hardware(sc, r).gpus_per_node);
}

bool splits(int ep_gpus, int gpus_per_node, int nodes) {
  return ep_gpus == 0 || (nodes * gpus_per_node) % ep_gpus == 0;
}

int unit_nodes(int ep_gpus, int gpus_per_node) {
  return ep_gpus <= gpus_per_node ? 1 : ep_gpus / gpus_per_node;
}

Status check_units(const ScenarioConfig& sc) {
  const ModelSpec& m = sc.model;
  for (UnitRole r : {UnitRole::kPrefill, UnitRole::kDecode}) {
    const HardwareSpec& hw = role_hardware(sc, r);
    const std::string& hw_file = role_hardware_file(sc, r);
    const int g = hw.gpus_per_node;
    const int ep = ep_field(sc, r), nodes = role_nodes(sc, r), role_gpus = nodes * g;
    const std::string field = fmt::format("cluster.{}_ep_gpus", name(r));
    if (m.weight_shards == 1) {
      if (ep != 1)
        return Status::error(fmt::format(
            "{}: {}: expected 1 or absent: {} holds the whole model on every GPU (params.weight_shards = 1), "
            "so its unit is one GPU; got {}",
            sc.file, field, sc.model_file, ep));
    }
    if (m.weight_shards > 1 && ep > 0 && g % ep != 0 && ep % g != 0)
      return Status::error(
          fmt::format("{}: {}: expected a divisor or a multiple of the {} GPUs per node of {} "
                      "(or 0: one unit spanning the role), got {}",
                      sc.file, field, g, hw_file, ep));
    const int u = unit_gpus(ep, role_gpus);
    if (!splits(ep, g, nodes)) {
      const int step = unit_nodes(ep, g), below = nodes / step * step, above = below + step;
      const std::string counts = below > 0 ? fmt::format("{} or {} {} nodes", below, above, name(r))
                                           : fmt::format("{} {} nodes", above, name(r));
      return Status::error(fmt::format(
          "{}: cluster.{}_nodes: {} {} nodes ({} GPUs) do not split into units of {} = {} GPUs ({} node(s) "
          "each); expected {}, or a {} that splits {} GPUs: {} (0 = one unit spanning the role)",
          sc.file, name(r), nodes, name(r), role_gpus, field, ep, step, counts, field, role_gpus,
          list(valid_sizes(m, hw, role_gpus))));
    }
    if (!weights_fit(m, hw, u))
      return Status::error(
          fmt::format("{}: {}: the weights of {} do not fit in the HBM of {} on a {} unit of {} GPU(s): ",
                      sc.file, ep <= 1 ? fmt::format("cluster.{}_nodes", name(r)) : field, sc.model_file,
                      hw_file, name(r), u) +
          fmt::format("{:.4g} GB of weights per GPU ({:g} params, {:g} B each, {} shards)",
                      m.weight_bytes_per_gpu(u) / 1e9, m.total_params, m.weight_bytes_per_param, u) +
          fmt::format(" + {:.4g} GB reserve >= {:.4g} GB of HBM per GPU, leaving no room for KV cache; "
                      "sizes that split {} GPUs and fit: {}",
                      m.hbm_reserve_bytes / 1e9, hw.gpu_hbm_bytes / 1e9, role_gpus,
                      list(valid_sizes(m, hw, role_gpus))));
    if (r == UnitRole::kPrefill && sc.cluster.prefill_dp_group_gpus > 0 &&
        u % sc.cluster.prefill_dp_group_gpus != 0)
      return Status::error(
          fmt::format("{}: cluster.prefill_dp_group_gpus: expected 0 or a divisor of the prefill unit's {} "
                      "GPUs (a DP-attention group stays inside its unit), got {}",
                      sc.file, u, sc.cluster.prefill_dp_group_gpus));
  }
  return Status::ok();
}

}  // namespace sim::config
