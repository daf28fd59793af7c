// Traffic classes: what a flow on the CNICs carries (DESIGN.md, "Two traffic classes share the CNICs").
// KV: storage reads, KV loads and pushes, H2D/D2H copies, persistence. Collective: the model's own
// collectives (the EP all-to-all of MoE layers), which share the CNICs with KV under a QoS rule.
#pragma once

namespace sim::transport {

enum class TrafficClass { kKv, kCollective };

constexpr const char* name(TrafficClass c) {
  return c == TrafficClass::kKv ? "kv" : "collective";
}

}  // namespace sim::transport
