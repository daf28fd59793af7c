// The default deployment units of an imported model: per role, the smallest EP/TP group whose GPUs hold the
// weights with room for KV on a node file. Sizes tried: the divisors of the node's GPUs, then whole nodes
// (the sizes the scenario loader accepts, sim/config/units.h). "Room for KV": each GPU keeps at least
// `kv_room_tokens` tokens of KV (by default the model's longest context: one request of it per GPU).
#pragma once

#include <string>

#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/core/status.h"

namespace sim::hf {

struct UnitChoice {
  int gpus = 0;
  std::string source;  // why this size: its HBM for KV against the room, and the size below it
};

// The largest group tried: 1,024 nodes' GPUs.
inline constexpr int kMaxUnitNodes = 1024;

// `m` with its weights and KV as imported (for a dense model replicated_params = 0: its weights shard over
// the group). Errors name `config_file` and the flags that set the units.
StatusOr<UnitChoice> smallest_unit(const config::ModelSpec& m, const config::HardwareSpec& hw,
                                   const std::string& hw_file, double kv_room_tokens,
                                   const std::string& config_file);
// A size given by a flag: a divisor or multiple of the node's GPUs that holds the weights.
StatusOr<UnitChoice> given_unit(const config::ModelSpec& m, const config::HardwareSpec& hw,
                                const std::string& hw_file, int gpus, const char* flag,
                                const std::string& config_file);

}  // namespace sim::hf
