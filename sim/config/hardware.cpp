#include "sim/config/hardware.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "sim/config/json_util.h"

namespace sim::config {

namespace {

// What moved to the engine file (config/engine.h) when the node file became hardware only: a file that
// still has it is refused with where it went.
Status moved_to_engine(const nlohmann::json& doc, const std::string& path) {
  const auto has = [&](const char* section, const char* key) {
    return doc.contains(section) && doc.at(section).is_object() && doc.at(section).contains(key);
  };
  std::string what;
  if (doc.contains("kernels"))
    what = "kernels";
  else if (doc.contains("collectives"))
    what = "collectives";
  else if (has("storage", "efficiency"))
    what = "storage.efficiency";
  else if (has("storage", "request_overhead_s"))
    what = "storage.request_overhead_s";
  if (what.empty()) return Status::ok();
  return Status::error(fmt::format(
      "{}: {}: a node file holds hardware only: the kernels' rates and fixed costs, the collectives' "
      "latencies "
      "and the storage client's efficiency and per-block cost are the engine's (models/engine/*.json, the "
      "scenario's \"engine\"; models/engine/README.md)",
      path, what));
}

StatusOr<HardwareSpec> hardware_from_json(const StatusOr<nlohmann::json>& doc, const std::string& path) {
  if (!doc) return doc.status();

  if (doc->is_object()) SIM_RETURN_IF_ERROR(moved_to_engine(*doc, path));
  HardwareSpec hw;
  const HardwareSpec def;
  hw.file = path;
  JsonReader r(*doc, path, "");
  hw.name = r.string("name", std::filesystem::path(path).stem().string());
  read_notes(r);
  std::map<std::string, std::string> sources;
  read_sources(r, *doc, sources);
  hw.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", def.gpus_per_node, 1, 64));
  r.object("gpu", [&](JsonReader& g) {
    hw.gpu_flops = g.positive("flops", def.gpu_flops);
    hw.gpu_hbm_bytes = g.positive("hbm_bytes", def.gpu_hbm_bytes);
    hw.gpu_hbm_bw_Bps = g.positive("hbm_bw_Bps", def.gpu_hbm_bw_Bps);
    hw.gpu_bf16_flops = g.non_negative("bf16_flops", def.gpu_bf16_flops);
    hw.gpu_sms = static_cast<int>(g.integer("sms", def.gpu_sms, 1, 100000));
  });
  r.object("nvlink", [&](JsonReader& n) { hw.nvlink_bw_Bps = n.non_negative("bw_Bps", def.nvlink_bw_Bps); });
  r.object("cnic", [&](JsonReader& c) { hw.cnic_bw_Bps = c.positive("bw_Bps", def.cnic_bw_Bps); });
  r.object("snic", [&](JsonReader& s) { hw.snic_bw_Bps = s.positive("bw_Bps", def.snic_bw_Bps); });
  r.object("dram", [&](JsonReader& d) { hw.dram_bw_Bps = d.positive("bw_Bps", def.dram_bw_Bps); });
  r.object("pcie", [&](JsonReader& p) { hw.pcie_bw_Bps = p.non_negative("bw_Bps", def.pcie_bw_Bps); });
  hw.link_latency_s = r.number("link_latency_s", def.link_latency_s, 0, 1.0);  // > 1 s is a typo
  r.object("storage", [&](JsonReader& s) {
    hw.storage_bw_per_node_Bps = s.non_negative("bw_per_node_Bps", def.storage_bw_per_node_Bps);
  });
  r.object("qos", [&](JsonReader& q) {
    // Relative weights; their ratio sets the QoS tags' latency (platform/builder.cpp), which stays small
    // (at most 20 us per transfer) for ratios up to 1000.
    hw.qos_weight_collective = q.number("weight_collective", def.qos_weight_collective, 1, 1000);
    hw.qos_weight_kv = q.number("weight_kv", def.qos_weight_kv, 1, 1000);
  });
  r.object("cost", [&](JsonReader& c) {
    // Absent = unknown; when present it must be a number >= 0 (null is not "absent").
    if (c.raw("per_node_hour") != nullptr)
      hw.cost_per_node_hour = c.non_negative("per_node_hour", std::nullopt);
  });
  SIM_RETURN_IF_ERROR(r.finish());
  return hw;
}

}  // namespace

StatusOr<HardwareSpec> load_hardware(const std::string& path) {
  return hardware_from_json(read_json_file(path), path);
}

StatusOr<HardwareSpec> parse_hardware(const std::string& text, const std::string& name) {
  return hardware_from_json(parse_json_object(text, name), name);
}

}  // namespace sim::config
