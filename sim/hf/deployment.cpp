#include "sim/hf/deployment.h"

#include <fmt/format.h>

#include "sim/cost/compute_model.h"

namespace sim::hf {

namespace {

std::vector<int> sizes(int g) {
  std::vector<int> out;
  for (int u = 1; u <= g; ++u)
    if (g % u == 0) out.push_back(u);
  for (int k = 2; k <= kMaxUnitNodes; ++k) out.push_back(k * g);
  return out;
}

double kv_tokens(const config::ModelSpec& m, const config::HardwareSpec& hw, int gpus) {
  return cost::hbm_kv_bytes_per_gpu(m, hw, gpus) / cost::kv_bytes_per_token(m);
}

std::string describe_size(const config::ModelSpec& m, const config::HardwareSpec& hw, int gpus) {
  return fmt::format("{} GPU(s): {:.1f} GB of weights per GPU, {:.1f} GB left for KV = {:.0f} tokens", gpus,
                     m.weight_bytes_per_gpu(gpus) / 1e9, cost::hbm_kv_bytes_per_gpu(m, hw, gpus) / 1e9,
                     kv_tokens(m, hw, gpus));
}

}  // namespace

StatusOr<UnitChoice> smallest_unit(const config::ModelSpec& m, const config::HardwareSpec& hw,
                                   const std::string& hw_file, double kv_room_tokens,
                                   const std::string& config_file) {
  const std::vector<int> tried = sizes(hw.gpus_per_node);
  for (size_t i = 0; i < tried.size(); ++i) {
    if (kv_tokens(m, hw, tried[i]) < kv_room_tokens) continue;
    UnitChoice c;
    c.gpus = tried[i];
    c.source = fmt::format(
        "the smallest group on {} ({} GB HBM per GPU, {:g} GB reserve) that holds the weights with room "
        "for {:.0f} tokens of KV per GPU: {}",
        hw_file, hw.gpu_hbm_bytes / 1e9, m.hbm_reserve_bytes / 1e9, kv_room_tokens,
        describe_size(m, hw, c.gpus));
    if (i > 0) c.source += "; " + describe_size(m, hw, tried[i - 1]) + " is too few";
    return c;
  }
  return Status::error(fmt::format(
      "{}: deployment units: expected a group of at most {} nodes of {} whose GPUs hold the weights "
      "({:.4g} GB) with room for {:.0f} tokens of KV each, found none (set --prefill-ep/--decode-ep, or a "
      "smaller --kv-room-tokens)",
      config_file, kMaxUnitNodes, hw_file, m.weight_bytes_per_gpu(1) / 1e9, kv_room_tokens));
}

StatusOr<UnitChoice> given_unit(const config::ModelSpec& m, const config::HardwareSpec& hw,
                                const std::string& hw_file, int gpus, const char* flag,
                                const std::string& config_file) {
  const int g = hw.gpus_per_node;
  if (gpus < 1 || (g % gpus != 0 && gpus % g != 0))
    return Status::error(
        fmt::format("{}: {}: expected a divisor or a multiple of the {} GPUs per node of {}, got {}",
                    config_file, flag, g, hw_file, gpus));
  if (cost::hbm_kv_bytes_per_gpu(m, hw, gpus) <= 0)
    return Status::error(
        fmt::format("{}: {}: expected a group whose GPUs hold the weights with room for KV on {}, got {}: "
                    "{:.4g} GB of weights per GPU + {:.4g} GB reserve >= {:.4g} GB of HBM",
                    config_file, flag, hw_file, gpus, m.weight_bytes_per_gpu(gpus) / 1e9,
                    m.hbm_reserve_bytes / 1e9, hw.gpu_hbm_bytes / 1e9));
  UnitChoice c;
  c.gpus = gpus;
  c.source = fmt::format("the {} flag, on {}: {}", flag, hw_file, describe_size(m, hw, gpus));
  return c;
}

}  // namespace sim::hf
