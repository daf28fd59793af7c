// The checkpoint's precision: bytes per weight (the routed experts' may differ) and the KV cache's dtype.
// They come from the config's quantization fields when it has them (quantization_config, torch_dtype,
// kv_cache_scheme), else from the flags `--weights fp8|bf16|fp4` and `--kv fp8|bf16`; a flag given wins.
// Neither is ever assumed: without a field or a flag the import fails, naming the key and the flag.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "sim/hf/architecture.h"
#include "sim/hf/config_reader.h"

namespace sim::hf {

struct Precision {
  double weight_bytes = 2;         // every weight but the routed experts
  double expert_weight_bytes = 0;  // the routed experts; 0 = weight_bytes
  std::string gemm = "bf16";       // fp8 | bf16: which peak of the node file the GEMMs run at
  std::string kv = "bf16";         // fp8 | bf16
  std::string weights_source, kv_source, gemm_source;
};

// The flags as given ("" = not given).
struct PrecisionFlags {
  std::string weights;  // fp8 | bf16 | fp4
  std::string kv;       // fp8 | bf16
};

// Bytes per parameter of a weight format: fp8 1, bf16 (and fp16) 2, fp4 = MXFP4 (4-bit values, one 8-bit
// scale per 32) 0.53125.
double bytes_of_format(const std::string& format);

StatusOr<Precision> resolve_precision(ConfigReader& r, const Architecture& a, const PrecisionFlags& flags);

// KV bytes per token and layer of the main cache at `kv`: GQA 2 x kv_heads x head_dim x (1 or 2); MLA in BF16
// (kv_lora_rank + qk_rope_head_dim) x 2, in FP8 FlashMLA's layout: the latent in FP8 with one FP32 scale per
// 128 values, the RoPE key in BF16.
double kv_bytes_per_token_layer(const Architecture& a, const std::string& kv);
// The DSA indexer's key per token and layer: FP8 with one FP32 scale per 128 values (DeepSeek-V3.2's).
double indexer_bytes_per_token_layer(const Architecture& a);

}  // namespace sim::hf
