// The platform's node roles and resource classes, and their names in results ("prefill", "snic", ...):
// the one list that the results, the sweep summary and the timeline use (analysis/dpsim_plots/inputs.py
// reads the same names from the results). Pure: no SimGrid.
#pragma once

#include <string>

namespace sim::platform {

enum class NodeRole { kPrefill, kDecode };

// kBuffer: a node's DRAM buffer (cluster.dram_buffer_bytes), a capacity rather than a link: its utilisation
// is its mean occupancy.
enum class ResourceClass { kSnic, kCnic, kDram, kPcie, kStorage, kGpu, kBuffer };

constexpr const char* name(NodeRole r) {
  return r == NodeRole::kPrefill ? "prefill" : "decode";
}

constexpr const char* name(ResourceClass c) {
  switch (c) {
    case ResourceClass::kSnic:
      return "snic";
    case ResourceClass::kCnic:
      return "cnic";
    case ResourceClass::kDram:
      return "dram";
    case ResourceClass::kPcie:
      return "pcie";
    case ResourceClass::kStorage:
      return "storage";
    case ResourceClass::kGpu:
      return "gpu";
    case ResourceClass::kBuffer:
      return "buffer";
  }
  return "?";
}

// The results' key of a resource class of one role: "prefill.cnic.write", "decode.gpu.compute".
inline std::string class_key(NodeRole r, ResourceClass c, const std::string& direction) {
  return std::string(name(r)) + "." + name(c) + "." + direction;
}

}  // namespace sim::platform
