#include "sim/config/engine.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <utility>

#include "sim/config/json_util.h"

namespace sim::config {

const char* name(EpOverlap o) {
  switch (o) {
    case EpOverlap::kTwoMicroBatches:
      return "two_micro_batches";
    case EpOverlap::kNone:
      return "none";
    case EpOverlap::kIdeal:
      break;
  }
  return "ideal";
}

const char* name(ExpertBalance b) {
  switch (b) {
    case ExpertBalance::kPerfect:
      return "perfect";
    case ExpertBalance::kBalancer:
      return "balancer";
    case ExpertBalance::kNoBalancer:
      break;
  }
  return "no_balancer";
}

double EngineSpec::tokens_per_step() const {
  double tokens = 1, accepted = 1;
  for (int i = 0; i < mtp_draft_tokens; ++i) {
    accepted *= mtp_acceptance;
    tokens += accepted;
  }
  return tokens;
}

double log2_interpolate(const std::vector<int>& x, const std::vector<double>& y, int at, double empty) {
  if (x.empty()) return empty;
  if (at <= x.front()) return y.front();
  if (at >= x.back()) return y.back();
  size_t hi = 1;
  while (x[hi] < at) ++hi;
  const double x0 = std::log2(x[hi - 1]), x1 = std::log2(x[hi]);
  const double w = (std::log2(at) - x0) / (x1 - x0);
  return (1 - w) * y[hi - 1] + w * y[hi];
}

double expert_imbalance(const EngineSpec& e, int ep_gpus) {
  if (ep_gpus <= 1 || e.expert_balance == ExpertBalance::kPerfect) return 1;
  const BalanceTable& t = e.expert_balance == ExpertBalance::kBalancer ? e.balanced : e.unbalanced;
  return 1 / log2_interpolate(t.ep_gpus, t.balancedness, ep_gpus, 1.0);
}

namespace {

// EP sizes >= 2, whole and increasing, at `key`; the error names the key.
std::vector<int> ep_sizes(JsonReader& r, const char* key) {
  const char* what = "whole EP sizes >= 2 in increasing order";
  const std::vector<double> v = read_numbers(r, key, 2, 1e6, what);
  std::vector<int> out;
  for (size_t i = 0; i < v.size() && r.ok(); ++i) {
    if (v[i] != std::floor(v[i]) || (i > 0 && v[i] <= v[i - 1]))
      r.fail(key, fmt::format("an array of {}", what), r.raw(key));
    out.push_back(static_cast<int>(v[i]));
  }
  // An empty table is a slip, not "no table" (leave the table out for that). Before, an empty
  // exchange.latency ran silently as no latency.
  if (r.ok() && out.empty() && r.raw(key) != nullptr)
    r.fail(key, fmt::format("a non-empty array of {} (leave the table out for none)", what), r.raw(key));
  return out;
}

// `values` has one entry per EP size, or the error names `key`.
void one_per_size(JsonReader& r, const char* key, const std::vector<double>& values, size_t sizes) {
  if (r.ok() && values.size() != sizes)
    r.fail(key, fmt::format("{} values, one per ep_gpus", sizes), r.raw(key));
}

// A share of a peak (a kernel's in-service rate, the storage client's efficiency, an EP group's
// balancedness) is in [kMinShare, 1]. Below 1% no engine runs: the shipped engines' lowest share is 0.2072,
// and a value a hundred times lower is a slip (a percentage's digits, a wrong exponent) that makes every pass
// a hundred times longer or more; at 1e-15 a pass lasts 1e12 simulated s. models/engine/README.md.
constexpr double kMinShare = 0.01;

double share(JsonReader& r, const char* key, double def) {
  return r.number(key, def, kMinShare, 1);
}
// 0 (the key's "none": use another value) or a share.
double zero_or_share(JsonReader& r, const char* key, double def) {
  const double v = r.number(key, def, 0, 1);
  if (r.ok() && v > 0 && v < kMinShare)
    r.fail(key, fmt::format("0 or a number >= {:g} and <= 1", kMinShare), r.raw(key));
  return v;
}

void read_kernels(JsonReader& k, EngineSpec& e, const EngineSpec& def) {
  e.k_prefill_attention_mqa = share(k, "prefill_attention_mqa", def.k_prefill_attention_mqa);
  e.k_prefill_attention_mha = share(k, "prefill_attention_mha", def.k_prefill_attention_mha);
  e.k_decode_attention_dense = share(k, "decode_attention_dense", def.k_decode_attention_dense);
  e.k_decode_attention_sparse = share(k, "decode_attention_sparse", def.k_decode_attention_sparse);
  e.k_indexer = share(k, "indexer", def.k_indexer);
  e.k_gemm = share(k, "gemm", def.k_gemm);
  e.k_decode_experts = zero_or_share(k, "decode_experts", def.k_decode_experts);
  e.k_prefill_experts = zero_or_share(k, "prefill_experts", def.k_prefill_experts);
  e.k_gemm_hbm = share(k, "gemm_hbm", def.k_gemm_hbm);
  e.k_attention_hbm = share(k, "attention_hbm", def.k_attention_hbm);
  e.k_prefill_efficiency = share(k, "prefill_efficiency", def.k_prefill_efficiency);
  // More than 1 s per layer is a unit typo (ms for s).
  e.prefill_layer_overhead_s = k.number("prefill_layer_overhead_s", def.prefill_layer_overhead_s, 0, 1.0);
  e.decode_layer_overhead_s = k.number("decode_layer_overhead_s", def.decode_layer_overhead_s, 0, 1.0);
  e.prefill_token_s = k.number("prefill_token_s", def.prefill_token_s, 0, 1e-4);  // > 0.1 ms is a typo
  e.decode_token_s = k.number("decode_token_s", def.decode_token_s, 0, 1e-4);
}

// exchange.latency: {"ep_gpus": [..], "decode_dispatch_s": [..], ...}, one latency per EP size.
void read_latency(JsonReader& c, EpLatencyTable& t) {
  const std::vector<int> eps = ep_sizes(c, "ep_gpus");
  // More than 10 ms for one layer's dispatch or combine is a unit typo (us for s).
  const char* what = "latencies in seconds, >= 0 and <= 0.01, one per ep_gpus";
  t.decode_dispatch_s = read_numbers(c, "decode_dispatch_s", 0, 0.01, what);
  t.decode_combine_s = read_numbers(c, "decode_combine_s", 0, 0.01, what);
  t.prefill_dispatch_s = read_numbers(c, "prefill_dispatch_s", 0, 0.01, what);
  t.prefill_combine_s = read_numbers(c, "prefill_combine_s", 0, 0.01, what);
  for (const auto& [key, v] : {std::pair{"decode_dispatch_s", &t.decode_dispatch_s},
                               {"decode_combine_s", &t.decode_combine_s},
                               {"prefill_dispatch_s", &t.prefill_dispatch_s},
                               {"prefill_combine_s", &t.prefill_combine_s}})
    one_per_size(c, key, *v, eps.size());
  t.ep_gpus = eps;
}

void read_rates(JsonReader& c, ExchangeRateTable& t) {
  t.ep_gpus = ep_sizes(c, "ep_gpus");
  // At least 1 GB/s: DeepEP's published internode rates are 30-60 GB/s per GPU; a rate in GB/s written
  // as bytes/s (30.9 for 30.9e9) would make each layer's exchange last years.
  const char* what = "bytes/s >= 1e9 and <= 1e13, one per ep_gpus";
  t.dispatch_Bps = read_numbers(c, "dispatch_Bps", 1e9, 1e13, what);
  t.combine_Bps = read_numbers(c, "combine_Bps", 1e9, 1e13, what);
  one_per_size(c, "dispatch_Bps", t.dispatch_Bps, t.ep_gpus.size());
  one_per_size(c, "combine_Bps", t.combine_Bps, t.ep_gpus.size());
}

void read_exchange(JsonReader& x, EngineSpec& e, const EngineSpec& def) {
  // Absent: two micro-batches, as DeepSeek's published inference system overlaps (the struct's default,
  // ideal, is the cost model's formulas before overlap was modelled, for hand-built specs).
  const std::string overlap =
      x.one_of("overlap", "two_micro_batches", {"two_micro_batches", "none", "ideal"});
  e.ep_overlap = overlap == "none"    ? EpOverlap::kNone
                 : overlap == "ideal" ? EpOverlap::kIdeal
                                      : EpOverlap::kTwoMicroBatches;
  e.prefill_comm_sms = x.number("prefill_comm_sms", def.prefill_comm_sms, 0, 100000);
  e.decode_exchange_sm_s_per_token =
      x.number("decode_sm_s_per_token", def.decode_exchange_sm_s_per_token, 0, 1e-3);  // > 1 ms is a typo
  x.object("latency", [&](JsonReader& l) { read_latency(l, e.ep_latency); });
  x.object("prefill_rate", [&](JsonReader& l) { read_rates(l, e.prefill_exchange); });
}

void read_balance(JsonReader& b, BalanceTable& t) {
  t.ep_gpus = ep_sizes(b, "ep_gpus");
  t.balancedness = read_numbers(b, "balancedness", kMinShare, 1, "numbers in [0.01, 1], one per ep_gpus");
  one_per_size(b, "balancedness", t.balancedness, t.ep_gpus.size());
}

void read_experts(JsonReader& x, EngineSpec& e, const EngineSpec& def) {
  const std::string b = x.one_of("balance", name(def.expert_balance), {"perfect", "balancer", "no_balancer"});
  e.expert_balance = b == "perfect"    ? ExpertBalance::kPerfect
                     : b == "balancer" ? ExpertBalance::kBalancer
                                       : ExpertBalance::kNoBalancer;
  x.object("balancer", [&](JsonReader& t) { read_balance(t, e.balanced); });
  x.object("no_balancer", [&](JsonReader& t) { read_balance(t, e.unbalanced); });
  if (!x.ok()) return;
  const BalanceTable& used = e.expert_balance == ExpertBalance::kBalancer ? e.balanced : e.unbalanced;
  if (e.expert_balance != ExpertBalance::kPerfect && used.ep_gpus.empty())
    x.fail(e.expert_balance == ExpertBalance::kBalancer ? "balancer" : "no_balancer",
           fmt::format("a balancedness table (experts.balance is \"{}\")", b), nullptr);
}

void read_decode(JsonReader& d, EngineSpec& e, const EngineSpec& def) {
  e.decode_cpu_s = d.number("cpu_s", def.decode_cpu_s, 0, 1.0);  // > 1 s per step is a typo
  d.object("mtp", [&](JsonReader& m) {
    e.mtp_draft_tokens = static_cast<int>(m.integer("draft_tokens", def.mtp_draft_tokens, 0, 16));
    e.mtp_acceptance = m.number("acceptance", def.mtp_acceptance, 0, 1);
    e.mtp_module_layers = m.number("module_layers", def.mtp_module_layers, 0, 1000);
  });
}

// The one reader of an engine document; `path` names it in messages. The public functions below all end
// here (under a name of its own, so that no call can resolve to one of them instead).
StatusOr<EngineSpec> read_engine(const nlohmann::json& doc, const std::string& path) {
  EngineSpec e;
  const EngineSpec def;
  e.file = path;
  JsonReader r(doc, path, "");
  e.name = r.string("name", std::filesystem::path(path).stem().string());
  read_notes(r);
  read_sources(r, doc, e.sources);
  r.object("kernels", [&](JsonReader& k) { read_kernels(k, e, def); });
  r.object("exchange", [&](JsonReader& x) { read_exchange(x, e, def); });
  r.object("prefill", [&](JsonReader& p) {
    e.max_pass_tokens = p.number("max_pass_tokens", def.max_pass_tokens, 0, 1e9);
    e.prefill_cpu_s = p.number("cpu_s", def.prefill_cpu_s, 0, 1.0);  // > 1 s per pass is a typo
  });
  r.object("decode", [&](JsonReader& d) { read_decode(d, e, def); });
  r.object("experts", [&](JsonReader& x) { read_experts(x, e, def); });
  r.object("storage", [&](JsonReader& s) {
    e.storage_efficiency = share(s, "efficiency", def.storage_efficiency);
    e.storage_request_overhead_s = s.number("request_overhead_s", def.storage_request_overhead_s, 0, 1.0);
  });
  SIM_RETURN_IF_ERROR(r.finish());
  return e;
}

}  // namespace

StatusOr<EngineSpec> load_engine(const std::string& path) {
  StatusOr<nlohmann::json> doc = read_json_file(path);
  if (!doc) return doc.status();
  return read_engine(*doc, path);
}

StatusOr<EngineSpec> parse_engine(const std::string& text, const std::string& name) {
  StatusOr<nlohmann::json> doc = parse_json_object(text, name);
  if (!doc) return doc.status();
  return read_engine(*doc, name);
}

StatusOr<EngineSpec> engine_from_json(const nlohmann::json& doc, const std::string& name) {
  return read_engine(doc, name);
}

}  // namespace sim::config
