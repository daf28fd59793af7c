// Deployment units (DESIGN.md, "Deployment units"): a role's GPUs split into EP groups of a fixed size.
// Everything an EP group shares belongs to its unit: the weights each GPU holds and so the HBM left for KV,
// the experts a step reads, the dispatch and combine, and the lock-step of prefill passes and decode steps.
// A larger cluster has more units, not larger ones; the schedulers place across all of them.
//
// cluster.prefill_ep_gpus / decode_ep_gpus give the GPUs of one unit: absent = the model file's
// params.<role>_ep_gpus; 0 = one unit spanning the whole role. A model whose GPUs each hold the whole model
// (params.weight_shards = 1) has units of one GPU. An EP unit is a divisor of the GPUs per node or a
// multiple of them (a unit of whole nodes), it holds its weights with room for KV, and the role's GPUs
// split into whole units; any other count is an error that names the nearest valid ones. Pure.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::config {

struct ScenarioConfig;
struct ModelSpec;
struct HardwareSpec;

enum class UnitRole { kPrefill, kDecode };
const char* name(UnitRole r);

// The hardware of a role's nodes (ScenarioConfig::prefill_hardware or decode_hardware), and its file.
const HardwareSpec& role_hardware(const ScenarioConfig& sc, UnitRole r);
const std::string& role_hardware_file(const ScenarioConfig& sc, UnitRole r);

// The scenario's cluster.<role>_ep_gpus after load(): -1 (not given) becomes the model's default.
void resolve_units(ScenarioConfig& sc);

// GPUs per unit of a role of `role_gpus` GPUs, from a resolved `ep_gpus` (0 = the whole role).
inline int unit_gpus(int ep_gpus, int role_gpus) {
  return ep_gpus == 0 ? role_gpus : ep_gpus;
}
// Of a resolved scenario, at its cluster's counts.
int unit_gpus(const ScenarioConfig& sc, UnitRole r);

// Whether `nodes` nodes of g GPUs split into whole units of `ep_gpus` (0 = the whole role: always).
bool splits(int ep_gpus, int gpus_per_node, int nodes);
// The node counts a role may take: multiples of a unit's nodes (every count for units within a node).
// The smallest count >= 1 and the step between counts.
int unit_nodes(int ep_gpus, int gpus_per_node);

// The resolved scenario's units are valid (see above): Status names the file and the field.
Status check_units(const ScenarioConfig& sc);

}  // namespace sim::config
