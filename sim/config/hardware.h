// HardwareSpec: one node type of the cluster, loaded from models/hardware/*.json: hardware only (peaks,
// links, sizes, prices from public datasheets); what the software makes of it is the engine file's
// (config/engine.h). Units: bytes, bytes/s, FLOP/s, seconds. Symbols follow DualPath §4.2: g GPUs per node,
// each with a CNIC of bandwidth B; a storage NIC of bandwidth s·B; DRAM bandwidth M.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::config {

struct HardwareSpec {
  std::string name;
  std::string file;  // where it was loaded from

  int gpus_per_node = 8;        // g
  double gpu_flops = 1.979e15;  // peak dense FLOP/s used by the cost model (FP8 on Hopper)
  double gpu_hbm_bytes = 80e9;  // HBM capacity per GPU
  double gpu_hbm_bw_Bps = 3.35e12;
  double gpu_bf16_flops = 0;  // peak dense BF16 FLOP/s; 0 = half of gpu_flops (Hopper: 989 vs 1,979 T)
  int gpu_sms = 132;          // streaming multiprocessors per GPU (H100/H800 SXM: 132)
  // NVLink, per GPU per direction: carries the intra-node part of the EP exchange. 0 = not modelled.
  double nvlink_bw_Bps = 0;
  double cnic_bw_Bps = 50e9;   // B, per direction (split-duplex)
  double snic_bw_Bps = 50e9;   // s·B, per direction (split-duplex)
  double dram_bw_Bps = 500e9;  // M, shared by reads and writes
  double pcie_bw_Bps = 0;      // per direction; 0 = PCIe links are not modelled
  double link_latency_s = 0;   // on every modelled link
  // Storage backend (3FS-like) as seen by one node: a per-node bandwidth cap behind the SNIC; 0 = none (what
  // the engine's storage client reaches then sets the rate: config/engine.h).
  double storage_bw_per_node_Bps = 0;
  // Bandwidth weights of the two traffic classes under network.qos = priority (DESIGN.md, "Two traffic
  // classes share the CNICs"): while both are active on a link they share it in this ratio; either alone
  // takes the whole link.
  double qos_weight_collective = 99;
  double qos_weight_kv = 1;
  // What one node costs to run, in money per node per hour (any currency, the file's choice); unset =
  // unknown, and the results then carry no cost (summary.cost = null). No shipped file sets it.
  std::optional<double> cost_per_node_hour;

  double s() const { return snic_bw_Bps / cnic_bw_Bps; }
  double bf16_flops() const { return gpu_bf16_flops > 0 ? gpu_bf16_flops : gpu_flops / 2; }
};

// Loads and validates a hardware file. Errors name the file and the JSON path.
StatusOr<HardwareSpec> load_hardware(const std::string& path);
// The same from the text of a hardware file; `name` stands for the file in messages and its stem is the
// default name. Reads no file.
StatusOr<HardwareSpec> parse_hardware(const std::string& text, const std::string& name);

}  // namespace sim::config
