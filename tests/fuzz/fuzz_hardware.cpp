// libFuzzer harness: bytes -> sim::config::parse_hardware (the text of a models/hardware/*.json file).
#include <cmath>

#include "sim/config/hardware.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz/hardware.json";
  sim::StatusOr<sim::config::HardwareSpec> hw =
      sim::config::parse_hardware(sim::fuzz::as_text(data, size), name);
  if (!hw) {
    sim::fuzz::check_error_names_file(hw.status(), name);
    return 0;
  }
  // An accepted file holds only usable numbers.
  if (hw->gpus_per_node < 1 || !(hw->cnic_bw_Bps > 0) || !(hw->snic_bw_Bps > 0) || !std::isfinite(hw->s()))
    sim::fuzz::contract_broken("accepted hardware with unusable values", hw->name);
  // The lower bounds (scenarios/README.md, "Bounds, and why").
  if (!(hw->gpu_flops >= 1e12) || !(hw->gpu_hbm_bytes >= 1e9) || !(hw->gpu_hbm_bw_Bps >= 1e10) ||
      !(hw->cnic_bw_Bps >= 1e6) || !(hw->snic_bw_Bps >= 1e6) || !(hw->dram_bw_Bps >= 1e6))
    sim::fuzz::contract_broken("accepted hardware below a bound", hw->name);
  if (hw->cost_per_node_hour && !(*hw->cost_per_node_hour >= 0 && std::isfinite(*hw->cost_per_node_hour)))
    sim::fuzz::contract_broken("accepted hardware with a negative or non-finite price", hw->name);
  return 0;
}
