// libFuzzer harness: bytes -> sim::config::parse_engine (the text of a models/engine/*.json file).
#include <cmath>

#include "sim/config/engine.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz/engine.json";
  sim::StatusOr<sim::config::EngineSpec> e = sim::config::parse_engine(sim::fuzz::as_text(data, size), name);
  if (!e) {
    sim::fuzz::check_error_names_file(e.status(), name);
    return 0;
  }
  // An accepted engine yields usable rates and counts: kernel fractions in (0, 1], at least one token per
  // step, and a finite imbalance >= 1 and finite latencies at every EP size.
  for (double k : {e->k_prefill_attention_mqa, e->k_prefill_attention_mha, e->k_decode_attention_dense,
                   e->k_decode_attention_sparse, e->k_gemm, e->k_gemm_hbm, e->k_attention_hbm,
                   e->k_prefill_efficiency, e->storage_efficiency})
    if (!(k >= 0.01 && k <= 1))  // models/engine/README.md, "Bounds, and why"
      sim::fuzz::contract_broken("accepted engine with a fraction outside [0.01, 1]", e->name);
  for (double k : {e->k_decode_experts, e->k_prefill_experts})
    if (!(k == 0 || (k >= 0.01 && k <= 1)))
      sim::fuzz::contract_broken("accepted engine with an expert rate neither 0 nor in [0.01, 1]", e->name);
  const double tokens = e->tokens_per_step();
  if (!std::isfinite(tokens) || tokens < 1 || e->queries_per_step() < 1)
    sim::fuzz::contract_broken("accepted engine with fewer than one token per step", e->name);
  for (int ep : {1, 2, 8, 24, 144, 4096}) {
    const double imb = sim::config::expert_imbalance(*e, ep);
    if (!std::isfinite(imb) || imb < 1)
      sim::fuzz::contract_broken("accepted engine with an imbalance below 1 or not finite", e->name);
    const double lat =
        sim::config::log2_interpolate(e->ep_latency.ep_gpus, e->ep_latency.decode_dispatch_s, ep, 0);
    if (!std::isfinite(lat) || lat < 0)
      sim::fuzz::contract_broken("accepted engine with a negative or non-finite latency", e->name);
  }
  return 0;
}
