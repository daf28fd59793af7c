#include "sim/hf/precision.h"

#include <fmt/format.h>

#include <cmath>

namespace sim::hf {

double bytes_of_format(const std::string& format) {
  if (format == "fp8") return 1;
  if (format == "fp4") return 0.53125;  // MXFP4: 4 bits + an 8-bit scale per 32 values = 4.25 bits
  return 2;                             // bf16
}

namespace {

// The weights' format named by torch_dtype (or dtype, its newer name), or "" when it names none we know.
std::string dtype_format(const std::string& dtype) {
  if (dtype == "bfloat16" || dtype == "float16") return "bf16";
  if (dtype == "float8_e4m3fn") return "fp8";
  return "";
}

}  // namespace

StatusOr<Precision> resolve_precision(ConfigReader& r, const Architecture& a, const PrecisionFlags& flags) {
  Precision p;
  const nlohmann::json* q = r.object("quantization_config");
  std::optional<std::string> dtype = r.optional_string("torch_dtype");
  if (!dtype) dtype = r.optional_string("dtype");
  if (!r.ok()) return r.status();

  // Weights. An MXFP4 config quantizes the routed experts only: the flag (or torch_dtype) gives the rest.
  const nlohmann::json* m = q != nullptr && q->contains("quant_method") ? &q->at("quant_method") : nullptr;
  const std::string method = m != nullptr && m->is_string() ? m->get<std::string>() : "";
  if (method == "mxfp4") {
    if (!a.moe_layers) {
      r.fail("quantization_config.quant_method", "fp8 or fbgemm_fp8 for a dense model (or --weights)", m);
      return r.status();
    }
    std::string rest = flags.weights, from = "the --weights " + flags.weights + " flag";
    if (rest.empty() && dtype && !dtype_format(*dtype).empty()) {
      rest = dtype_format(*dtype);
      from = "config torch_dtype \"" + *dtype + "\"";
    }
    if (rest.empty()) {
      nlohmann::json got = dtype ? nlohmann::json(*dtype) : nlohmann::json();
      r.fail("torch_dtype",
             "\"bfloat16\" or \"float16\": the precision of the weights MXFP4 leaves unquantized "
             "(attention, router, embeddings; the config does not give it, so pass --weights bf16|fp8)",
             dtype ? &got : nullptr);
      return r.status();
    }
    p.weight_bytes = bytes_of_format(rest);
    p.expert_weight_bytes = bytes_of_format("fp4");
    p.weights_source = fmt::format(
        "config quantization_config.quant_method \"mxfp4\": the routed experts in MXFP4, 4-bit values with "
        "one 8-bit scale per 32 = 0.53125 B per parameter; the modules it leaves (modules_to_not_convert: "
        "attention, router, embeddings, lm head) at {}, {:g} B",
        from, p.weight_bytes);
  } else if (!flags.weights.empty()) {
    p.weight_bytes = bytes_of_format(flags.weights);
    p.weights_source =
        fmt::format("the --weights {} flag: {:g} B per parameter", flags.weights, p.weight_bytes);
  } else if (q != nullptr) {
    if (method == "fp8" || method == "fbgemm_fp8") {
      p.weight_bytes = 1;
      p.weights_source = fmt::format(
          "config quantization_config.quant_method \"{}\": FP8 weights, 1 B per parameter (the block "
          "scales, 1/16,384 of the bytes, and the BF16 embeddings and norms are not counted)",
          method);
    } else {
      r.fail("quantization_config.quant_method",
             "one of fp8, fbgemm_fp8, mxfp4 (or pass --weights fp8|bf16|fp4)", m);
      return r.status();
    }
  } else if (dtype && !dtype_format(*dtype).empty()) {
    p.weight_bytes = bytes_of_format(dtype_format(*dtype));
    p.weights_source = fmt::format("config torch_dtype \"{}\" (no quantization_config): {:g} B per parameter",
                                   *dtype, p.weight_bytes);
  } else {
    nlohmann::json got = dtype ? nlohmann::json(*dtype) : nlohmann::json();
    r.fail("torch_dtype",
           "\"bfloat16\", \"float16\" or \"float8_e4m3fn\", or a quantization_config (or pass --weights "
           "fp8|bf16|fp4)",
           dtype ? &got : nullptr);
    return r.status();
  }
  if (p.weight_bytes == 1) {
    p.gemm = "fp8";
    p.gemm_source = "FP8 weights: the GEMMs run at the node file's FP8 peak";
  } else {
    p.gemm = "bf16";
    p.gemm_source =
        p.weight_bytes < 1 || p.expert_weight_bytes > 0
            ? "4-bit weights are dequantized into BF16 GEMMs (a node file has FP8 and BF16 peaks only)"
            : "BF16 weights: BF16 GEMMs (the node file's gpu.bf16_flops)";
    if (p.expert_weight_bytes > 0 && p.weight_bytes == 2)
      p.gemm_source =
          "BF16 weights beside MXFP4 experts, dequantized into BF16 GEMMs (a node file has FP8 and BF16 "
          "peaks only)";
  }

  // KV cache.
  const nlohmann::json* scheme =
      q != nullptr && q->contains("kv_cache_scheme") ? &q->at("kv_cache_scheme") : nullptr;
  if (!flags.kv.empty()) {
    p.kv = flags.kv;
    p.kv_source = fmt::format("the --kv {} flag", flags.kv);
  } else if (scheme != nullptr && !scheme->is_null()) {
    const bool fp8 = scheme->is_object() && scheme->contains("num_bits") && scheme->at("num_bits") == 8 &&
                     scheme->contains("type") && scheme->at("type") == "float";
    if (!fp8) {
      r.fail("quantization_config.kv_cache_scheme",
             "{\"num_bits\": 8, \"type\": \"float\"} (or pass --kv fp8|bf16)", scheme);
      return r.status();
    }
    p.kv = "fp8";
    p.kv_source = "config quantization_config.kv_cache_scheme: 8-bit float";
  } else {
    r.fail("quantization_config.kv_cache_scheme",
           "the KV cache's dtype: the config does not give it, so pass --kv fp8|bf16", nullptr);
    return r.status();
  }
  return p;
}

double kv_bytes_per_token_layer(const Architecture& a, const std::string& kv) {
  const double b = kv == "fp8" ? 1 : 2;
  if (!a.mla) return 2.0 * a.kv_heads * a.head_dim * b;
  if (kv == "fp8") return a.kv_lora_rank + std::ceil(a.kv_lora_rank / 128.0) * 4 + a.qk_rope_head_dim * 2.0;
  return (a.kv_lora_rank + a.qk_rope_head_dim) * 2.0;
}

double indexer_bytes_per_token_layer(const Architecture& a) {
  return a.indexer_head_dim > 0 ? a.indexer_head_dim + std::ceil(a.indexer_head_dim / 128.0) * 4 : 0;
}

}  // namespace sim::hf
