// HardwareSpec: one node type of the cluster, loaded from models/hardware/*.json.
// Units: bytes, bytes/s, FLOP/s, seconds. Symbols follow DualPath §4.2: g GPUs per node, each with a CNIC
// of bandwidth B; a storage NIC of bandwidth s·B; DRAM bandwidth M.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::config {

// How a layer's EP exchange overlaps its compute (the scenario's policy.ep_overlap; models/llm/README.md,
// "Fixed costs and overlap"): two micro-batches, each layer's exchange of one hidden behind the other's
// compute (DeepSeek's inference system); none (compute, then exchange); ideal (the exchange free beside
// the compute, without the micro-batches' cost).
enum class EpOverlap { kTwoMicroBatches, kNone, kIdeal };

// The fixed time of one MoE layer's dispatch and of its combine beyond their bytes (which are flows), by
// the EP group's size: points at increasing ep_gpus; between points linear in log2(ep_gpus), clamped at
// the ends. Empty = no latency.
struct EpLatencyTable {
  std::vector<int> ep_gpus;
  std::vector<double> decode_dispatch_s, decode_combine_s;    // low-latency kernels
  std::vector<double> prefill_dispatch_s, prefill_combine_s;  // normal kernels
};

struct HardwareSpec {
  std::string name;
  std::string file;  // where it was loaded from

  int gpus_per_node = 8;        // g
  double gpu_flops = 1.979e15;  // peak dense FLOP/s used by the cost model (FP8 on Hopper)
  double gpu_hbm_bytes = 80e9;  // HBM capacity per GPU
  double gpu_hbm_bw_Bps = 3.35e12;
  double gpu_bf16_flops = 0;  // peak dense BF16 FLOP/s; 0 = half of gpu_flops (Hopper: 989 vs 1,979 T)
  // What the kernels reach, as fractions of gpu_flops (FLOPs) or gpu_hbm_bw_Bps (bytes): one set per GPU,
  // for every model (models/llm/README.md, "Compute").
  double k_prefill_attention = 0.3234;  // prefill attention incl. the DSA indexer (FlashMLA 640 T)
  double k_decode_attention = 0.2072;   // decode attention FLOPs (FlashMLA sparse FP8 decode 410 T)
  double k_indexer = 0.3234;            // the DSA indexer's FLOPs, prefill and decode (no public figure;
                                        // the default is the prefill attention's)
  double k_gemm = 0.6468;               // GEMM FLOPs at the model's precision (DeepGEMM grouped 1,280 T)
  double k_gemm_hbm = 0.7964;           // weight reads of a memory-bound GEMM (DeepGEMM 2,668 GB/s)
  double k_attention_hbm = 0.8955;      // KV reads of memory-bound attention (FlashMLA 3,000 GB/s)
  // The share of those rates a prefill pass reaches in service (attention, indexer and GEMMs alike; not its
  // exchange or fixed costs); 1 = the kernels' published rates
  double k_prefill_efficiency = 1.0;
  double prefill_layer_overhead_s = 0;  // per layer per forward pass (per micro-batch), beyond the rates
  double decode_layer_overhead_s = 0;   // per layer per decode step (per micro-batch), beyond the rates
  double decode_step_overhead_s = 0;    // per decode step, beyond the kernels' rates
  EpLatencyTable ep_latency;            // collectives.*: dispatch and combine latency by EP size
  // Not a hardware-file key: the scenario's policy.ep_overlap, copied here by the scenario loader so that
  // the cost model reads one object. The default is the formulas before overlap was modelled.
  EpOverlap ep_overlap = EpOverlap::kIdeal;
  // NVLink, per GPU per direction: carries the intra-node part of the EP exchange. 0 = not modelled.
  double nvlink_bw_Bps = 0;
  double cnic_bw_Bps = 50e9;   // B, per direction (split-duplex)
  double snic_bw_Bps = 50e9;   // s·B, per direction (split-duplex)
  double dram_bw_Bps = 500e9;  // M, shared by reads and writes
  double pcie_bw_Bps = 0;      // per direction; 0 = PCIe links are not modelled
  double link_latency_s = 0;   // on every modelled link
  // Storage backend (3FS-like) as seen by one node: a per-node bandwidth cap behind the SNIC; 0 = none.
  double storage_bw_per_node_Bps = 0;
  // Fraction of the SNIC line rate that storage reaches on large blocks (sim/storage/read_rate.h).
  double storage_efficiency = 1.0;
  // Seconds of client and server work per block read or written, beside its bytes; 0 = none.
  double storage_request_overhead_s = 0;
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
