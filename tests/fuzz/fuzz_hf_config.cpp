// libFuzzer harness: bytes -> sim::hf::import_config_text (the text of a Hugging Face config.json), on the
// project's hopper-8x400g node file. The first byte picks the flags (KV dtype given or not, weights given or
// not, a room for KV), the rest is the config.
#include <cmath>

#include "sim/config/hardware.h"
#include "sim/core/paths.h"
#include "sim/hf/import.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const sim::config::HardwareSpec hw = [] {
    auto h =
        sim::config::load_hardware(std::string(sim::project_root()) + "/models/hardware/hopper-8x400g.json");
    if (!h) sim::fuzz::contract_broken("cannot load the node file", h.status().message());
    return *h;
  }();
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  sim::hf::ImportSpec spec;
  const char* kv[] = {"", "fp8", "bf16", "bf16"};
  const char* weights[] = {"", "fp8", "bf16", "fp4"};
  spec.precision.kv = kv[flags & 3];
  spec.precision.weights = weights[(flags >> 2) & 3];
  if (flags & 16) spec.kv_room_tokens = 4096;
  const std::string name = "fuzz/config.json";
  sim::StatusOr<sim::hf::Imported> m =
      sim::hf::import_config_text(sim::fuzz::as_text(data + 1, size - 1), name, spec, hw, "hopper-8x400g");
  if (!m) {
    sim::fuzz::check_error_names_file(m.status(), name);
    return 0;
  }
  // An accepted import loads (import_config_text reads it back) with finite, positive weights and KV, and
  // units whose GPUs hold the weights.
  const sim::config::ModelSpec& s = m->model;
  const double w = s.weight_bytes_per_gpu(m->prefill_ep);
  if (!std::isfinite(w) || !(w > 0) || !(s.main_kv_bytes_per_token_layer > 0) || m->prefill_ep < 1 ||
      m->decode_ep < 1 || w + s.hbm_reserve_bytes >= hw.gpu_hbm_bytes)
    sim::fuzz::contract_broken("accepted import with unusable values", s.name);
  return 0;
}
