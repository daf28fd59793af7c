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

// The node file's bounds (scenarios/README.md, "Hardware files": "Bounds, and why"). Below them a value is a
// unit slip (TFLOP/s written as FLOP/s, GB/s or Gb/s as B/s) that makes every pass or transfer a billion
// times longer; the slowest parts in service are far above them (a 10 Gb/s NIC moves 1.25e9 B/s, a 2016
// P100 reaches 21e12 FP16 FLOP/s, 16 GB of HBM at 720e9 B/s). Links go down to 1 MB/s, where the test
// fixtures make the EP exchange the step's bottleneck. Above kMaxRate no part exists (a B200 reaches
// 4.5e15 FP8 FLOP/s and 8e12 B/s of HBM); the test fixtures' "free" compute and HBM sit at 1e18.
constexpr double kMinFlops = 1e12;    // FLOP/s
constexpr double kMinHbmBps = 1e10;   // B/s
constexpr double kMinHbmBytes = 1e9;  // bytes
constexpr double kMinLinkBps = 1e6;   // B/s: NICs, DRAM, PCIe, NVLink, the storage backend
constexpr double kMaxRate = 1e20;     // every rate and size

// 0 (the field's "not modelled" or "derived") or a value in [lo, kMaxRate].
double zero_or_at_least(JsonReader& r, const char* key, double def, double lo) {
  const double v = r.number(key, def, 0, kMaxRate);
  if (r.ok() && v > 0 && v < lo) r.fail(key, fmt::format("0 or a number >= {:g}", lo), r.raw(key));
  return v;
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
    hw.gpu_flops = g.number("flops", def.gpu_flops, kMinFlops, kMaxRate);
    hw.gpu_hbm_bytes = g.number("hbm_bytes", def.gpu_hbm_bytes, kMinHbmBytes, kMaxRate);
    hw.gpu_hbm_bw_Bps = g.number("hbm_bw_Bps", def.gpu_hbm_bw_Bps, kMinHbmBps, kMaxRate);
    hw.gpu_bf16_flops = zero_or_at_least(g, "bf16_flops", def.gpu_bf16_flops, kMinFlops);
    hw.gpu_sms = static_cast<int>(g.integer("sms", def.gpu_sms, 1, 100000));
  });
  r.object("nvlink", [&](JsonReader& n) {
    hw.nvlink_bw_Bps = zero_or_at_least(n, "bw_Bps", def.nvlink_bw_Bps, kMinLinkBps);
  });
  r.object("cnic", [&](JsonReader& c) {
    hw.cnic_bw_Bps = c.number("bw_Bps", def.cnic_bw_Bps, kMinLinkBps, kMaxRate);
  });
  r.object("snic", [&](JsonReader& s) {
    hw.snic_bw_Bps = s.number("bw_Bps", def.snic_bw_Bps, kMinLinkBps, kMaxRate);
  });
  r.object("dram", [&](JsonReader& d) {
    hw.dram_bw_Bps = d.number("bw_Bps", def.dram_bw_Bps, kMinLinkBps, kMaxRate);
  });
  r.object("pcie", [&](JsonReader& p) {
    hw.pcie_bw_Bps = zero_or_at_least(p, "bw_Bps", def.pcie_bw_Bps, kMinLinkBps);
  });
  hw.link_latency_s = r.number("link_latency_s", def.link_latency_s, 0, 1.0);  // > 1 s is a typo
  r.object("storage", [&](JsonReader& s) {
    hw.storage_bw_per_node_Bps =
        zero_or_at_least(s, "bw_per_node_Bps", def.storage_bw_per_node_Bps, kMinLinkBps);
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
