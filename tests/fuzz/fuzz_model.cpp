// libFuzzer harness: bytes -> sim::config::parse_model (the text of a models/llm/*.json file).
#include <cmath>

#include "sim/config/model_spec.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz/model.json";
  sim::StatusOr<sim::config::ModelSpec> m = sim::config::parse_model(sim::fuzz::as_text(data, size), name);
  if (!m) {
    sim::fuzz::check_error_names_file(m.status(), name);
    return 0;
  }
  // An accepted model has finite, positive weights per GPU and KV bytes.
  const double w = m->weight_bytes_per_gpu();
  if (m->layers < 1 || !std::isfinite(w) || !(w > 0) || !(m->main_kv_bytes_per_token_layer > 0))
    sim::fuzz::contract_broken("accepted model with unusable values", m->name);
  return 0;
}
