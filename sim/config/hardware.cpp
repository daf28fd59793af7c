#include "sim/config/hardware.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "sim/config/json_util.h"

namespace sim::config {

namespace {

// Reads the free-form documentation keys: "notes" (a string or an array of strings) and "sources" (an
// object mapping a field to where its value comes from). Their content is not used by the simulator.
void read_documentation(JsonReader& r) {
  read_notes(r);
  if (const nlohmann::json* sources = r.raw("sources")) {
    if (!sources->is_object()) r.fail("sources", "an object (field -> where its value comes from)", sources);
  }
}

// An array of numbers at `key` (missing = empty), each in [lo, hi]; the error names the key and the element.
std::vector<double> numbers(JsonReader& r, const char* key, double lo, double hi, const char* what) {
  std::vector<double> out;
  const nlohmann::json* a = r.raw(key);
  if (a == nullptr) return out;
  const std::string expected = fmt::format("an array of {}", what);
  if (!a->is_array()) {
    r.fail(key, expected, a);
    return out;
  }
  for (const auto& v : *a) {
    if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi) {
      r.fail(key, expected, &v);
      return out;
    }
    out.push_back(v.get<double>());
  }
  return out;
}

// collectives: {"ep_gpus": [..], "decode_dispatch_s": [..], ...}, one latency per EP size.
void read_collectives(JsonReader& c, EpLatencyTable& t) {
  // More than 10 ms for one layer's dispatch or combine is a unit typo (us for s).
  const std::vector<double> eps = numbers(c, "ep_gpus", 2, 1e6, "EP sizes >= 2 in increasing order");
  for (size_t i = 1; i < eps.size() && c.ok(); ++i)
    if (eps[i] <= eps[i - 1]) c.fail("ep_gpus", "EP sizes >= 2 in increasing order", c.raw("ep_gpus"));
  for (double e : eps)
    if (c.ok() && e != static_cast<int>(e)) c.fail("ep_gpus", "whole EP sizes", c.raw("ep_gpus"));
  const char* what = "latencies in seconds, >= 0 and <= 0.01, one per ep_gpus";
  t.decode_dispatch_s = numbers(c, "decode_dispatch_s", 0, 0.01, what);
  t.decode_combine_s = numbers(c, "decode_combine_s", 0, 0.01, what);
  t.prefill_dispatch_s = numbers(c, "prefill_dispatch_s", 0, 0.01, what);
  t.prefill_combine_s = numbers(c, "prefill_combine_s", 0, 0.01, what);
  for (const auto& [key, v] : {std::pair{"decode_dispatch_s", &t.decode_dispatch_s},
                               {"decode_combine_s", &t.decode_combine_s},
                               {"prefill_dispatch_s", &t.prefill_dispatch_s},
                               {"prefill_combine_s", &t.prefill_combine_s}})
    if (c.ok() && v->size() != eps.size())
      c.fail(key, fmt::format("{} latencies, one per ep_gpus", eps.size()), c.raw(key));
  for (double e : eps) t.ep_gpus.push_back(static_cast<int>(e));
}

StatusOr<HardwareSpec> from_json(const StatusOr<nlohmann::json>& doc, const std::string& path) {
  if (!doc) return doc.status();

  HardwareSpec hw;
  const HardwareSpec def;
  hw.file = path;
  JsonReader r(*doc, path, "");
  hw.name = r.string("name", std::filesystem::path(path).stem().string());
  read_documentation(r);
  hw.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", def.gpus_per_node, 1, 64));
  r.object("gpu", [&](JsonReader& g) {
    hw.gpu_flops = g.positive("flops", def.gpu_flops);
    hw.gpu_hbm_bytes = g.positive("hbm_bytes", def.gpu_hbm_bytes);
    hw.gpu_hbm_bw_Bps = g.positive("hbm_bw_Bps", def.gpu_hbm_bw_Bps);
    hw.gpu_bf16_flops = g.non_negative("bf16_flops", def.gpu_bf16_flops);
  });
  r.object("kernels", [&](JsonReader& k) {
    hw.k_prefill_attention = k.fraction("prefill_attention", def.k_prefill_attention);
    hw.k_decode_attention = k.fraction("decode_attention", def.k_decode_attention);
    hw.k_indexer = k.fraction("indexer", def.k_indexer);
    hw.k_gemm = k.fraction("gemm", def.k_gemm);
    hw.k_gemm_hbm = k.fraction("gemm_hbm", def.k_gemm_hbm);
    hw.k_attention_hbm = k.fraction("attention_hbm", def.k_attention_hbm);
    hw.k_prefill_efficiency = k.fraction("prefill_efficiency", def.k_prefill_efficiency);
    // More than 1 s per layer or per decode step is a unit typo (ms for s).
    hw.prefill_layer_overhead_s = k.number("prefill_layer_overhead_s", def.prefill_layer_overhead_s, 0, 1.0);
    hw.decode_layer_overhead_s = k.number("decode_layer_overhead_s", def.decode_layer_overhead_s, 0, 1.0);
    hw.decode_step_overhead_s = k.number("decode_step_overhead_s", def.decode_step_overhead_s, 0, 1.0);
  });
  r.object("collectives", [&](JsonReader& c) { read_collectives(c, hw.ep_latency); });
  r.object("nvlink", [&](JsonReader& n) { hw.nvlink_bw_Bps = n.non_negative("bw_Bps", def.nvlink_bw_Bps); });
  r.object("cnic", [&](JsonReader& c) { hw.cnic_bw_Bps = c.positive("bw_Bps", def.cnic_bw_Bps); });
  r.object("snic", [&](JsonReader& s) { hw.snic_bw_Bps = s.positive("bw_Bps", def.snic_bw_Bps); });
  r.object("dram", [&](JsonReader& d) { hw.dram_bw_Bps = d.positive("bw_Bps", def.dram_bw_Bps); });
  r.object("pcie", [&](JsonReader& p) { hw.pcie_bw_Bps = p.non_negative("bw_Bps", def.pcie_bw_Bps); });
  hw.link_latency_s = r.number("link_latency_s", def.link_latency_s, 0, 1.0);  // > 1 s is a typo
  r.object("storage", [&](JsonReader& s) {
    hw.storage_bw_per_node_Bps = s.non_negative("bw_per_node_Bps", def.storage_bw_per_node_Bps);
    hw.storage_efficiency = s.fraction("efficiency", def.storage_efficiency);
    hw.storage_request_overhead_s = s.number("request_overhead_s", def.storage_request_overhead_s, 0, 1.0);
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
  return from_json(read_json_file(path), path);
}

StatusOr<HardwareSpec> parse_hardware(const std::string& text, const std::string& name) {
  return from_json(parse_json_object(text, name), name);
}

}  // namespace sim::config
