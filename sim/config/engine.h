// EngineSpec: the serving engine's software, loaded from models/engine/*.json and chosen by the scenario's
// `engine` (models/engine/README.md). The three kinds of file have three owners: the model file holds the
// architecture, the node (hardware) file the peaks, links and sizes, and the engine file what the software
// makes of them: how close its kernels come to the node's peaks, how it overlaps the EP exchange with the
// compute and what that costs, the largest prefill pass, the CPU time per pass and per step, how unevenly
// the routed experts load the GPUs, multi-token prediction, and its storage client. A fitted value is always
// an engine value. Units: fractions of a node peak, seconds, tokens, bytes/s.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::config {

// How a layer's EP exchange overlaps its compute (models/engine/README.md, "Overlap"): two micro-batches,
// each layer's exchange of one hidden behind the other's compute (DeepSeek's inference system); none
// (compute, then exchange); ideal (the exchange free beside the compute, without the micro-batches' cost).
enum class EpOverlap { kTwoMicroBatches, kNone, kIdeal };
const char* name(EpOverlap o);

// The fixed time of one MoE layer's dispatch and of its combine beyond their bytes, by the EP group's
// size: points at increasing ep_gpus; between points linear in log2(ep_gpus), clamped at the ends.
// Empty = no latency.
struct EpLatencyTable {
  std::vector<int> ep_gpus;
  std::vector<double> decode_dispatch_s, decode_combine_s;    // low-latency kernels
  std::vector<double> prefill_dispatch_s, prefill_combine_s;  // normal kernels
};

// What the prefill exchange's (normal) kernels move per GPU per second, by EP size, in their own
// accounting: the bytes a GPU sends to every node its tokens go to, its own node included (DeepEP's
// "bottleneck bandwidth"). Between points linear in log2(ep_gpus), clamped at the ends. Empty = the
// kernels keep up with the CNIC (the remote bytes at its line rate).
struct ExchangeRateTable {
  std::vector<int> ep_gpus;
  std::vector<double> dispatch_Bps, combine_Bps;
};

// How unevenly the routed experts load an EP group's GPUs: the balancedness (the mean over the group's
// GPUs of their routed (token, expert) pairs, over the busiest GPU's) by EP size, linear in log2(ep_gpus)
// between points and clamped at the ends. The step waits for the busiest GPU.
struct BalanceTable {
  std::vector<int> ep_gpus;
  std::vector<double> balancedness;  // in (0, 1]
};

// Which balance the engine runs with (experts.balance): perfect (every GPU its group's mean, as DeepSeek's
// profiles simulate it), with its balancer (redundant experts placed by load: "balancer", the table
// `balanced`), or without ("no_balancer", the table `unbalanced`).
enum class ExpertBalance { kPerfect, kBalancer, kNoBalancer };
const char* name(ExpertBalance b);

struct EngineSpec {
  std::string name;
  std::string file;                            // where it was loaded from
  std::map<std::string, std::string> sources;  // JSON path -> where the value comes from (documentation)

  // ---- kernels: fractions of the node's gpu.flops (FLOP rates) or gpu.hbm_bw_Bps (byte rates) ----
  double k_prefill_attention_mqa = 0.3234;    // attention in absorbed (MQA) form: DSA's sparse MLA prefill
  double k_prefill_attention_mha = 0.3234;    // attention in MHA form: GQA, and dense MLA un-absorbed
  double k_decode_attention_dense = 0.2072;   // decode attention over every context token
  double k_decode_attention_sparse = 0.2072;  // decode attention over the top-k tokens (DSA)
  double k_indexer = 0.3234;                  // the DSA indexer's FLOPs, prefill and decode
  double k_gemm = 0.6468;                     // GEMM FLOPs at the model's precision (prefill, decode dense)
  double k_decode_experts = 0;                // the decode step's routed-expert GEMMs; 0 = k_gemm
  double k_prefill_experts = 0;               // the prefill's routed-expert GEMMs; 0 = k_gemm
  double k_gemm_hbm = 0.7964;                 // weight reads of a memory-bound GEMM
  double k_attention_hbm = 0.8955;            // KV reads of memory-bound attention
  // The share of the rates above that a prefill pass reaches in service (attention, indexer and GEMMs
  // alike; not its exchange or fixed costs); 1 = the kernels' published rates.
  double k_prefill_efficiency = 1.0;
  double prefill_layer_overhead_s = 0;  // per layer per forward pass (per micro-batch): launches, syncs
  double decode_layer_overhead_s = 0;   // per layer per decode step (per micro-batch): launches, syncs
  // The small kernels beside the GEMMs and attention (norms, RoPE, router and top-k, activations,
  // quantisation), seconds per token per layer: they scale with the tokens, not with the micro-batches.
  double prefill_token_s = 0;
  double decode_token_s = 0;

  // ---- the EP exchange ----
  EpOverlap ep_overlap = EpOverlap::kIdeal;
  EpLatencyTable ep_latency;  // dispatch and combine latency by EP size
  // SMs the prefill exchange's kernels hold for the whole of an overlapped pass (of the node's gpu.sms):
  // the compute runs on the rest. 0 = none.
  double prefill_comm_sms = 0;
  ExchangeRateTable prefill_exchange;  // what the normal kernels move per GPU per second
  // SM time of the decode exchange's (low-latency) kernels, seconds per token of a micro-batch per MoE
  // layer, dispatch and combine together: their send and receive phases hold every SM, their waits none.
  double decode_exchange_sm_s_per_token = 0;

  // ---- passes and steps ----
  double max_pass_tokens = 0;  // new tokens a GPU takes into one prefill pass; 0 = no limit but the quota
  double prefill_cpu_s = 0;    // CPU time per prefill pass that the GPUs wait for
  double decode_cpu_s = 0;     // CPU time per decode step that the GPUs wait for

  // ---- routed experts ----
  ExpertBalance expert_balance = ExpertBalance::kPerfect;
  BalanceTable balanced;    // with the engine's balancer
  BalanceTable unbalanced;  // without it

  // ---- multi-token prediction (decode) ----
  int mtp_draft_tokens = 0;      // draft tokens per step (0 = off)
  double mtp_acceptance = 0;     // the chance that each draft token is accepted, given the one before was
  double mtp_module_layers = 1;  // layers of the draft module, run once per draft token
  // The engine file's draft tokens when the scenario's model has no MTP module (ModelSpec::mtp_modules 0):
  // they do not run, and mtp_draft_tokens is 0 (config/scenario.cpp).
  int mtp_draft_tokens_not_run = 0;

  // ---- storage client (a 3FS-like client reading and writing KV blocks) ----
  double storage_efficiency = 1.0;        // fraction of the SNIC line rate reached on large blocks
  double storage_request_overhead_s = 0;  // seconds per block read or written, beside its bytes

  // Tokens a request gains per decode step: 1 + a + a^2 + ... + a^d (a draft token counts only when every
  // draft before it was accepted).
  double tokens_per_step() const;
  // Tokens a request's query carries per decode step: 1 + the draft tokens (the target model verifies them).
  int queries_per_step() const { return 1 + mtp_draft_tokens; }
};

// A table's value at `ep_gpus`: linear in log2 between its points, clamped at its ends. REQUIRES: x and y
// of one size, x increasing; empty = `empty`.
double log2_interpolate(const std::vector<int>& x, const std::vector<double>& y, int ep_gpus, double empty);

// The busiest GPU's routed (token, expert) pairs over the mean of an EP group of `ep_gpus` GPUs under the
// engine's expert balance (1 for a group of one GPU or perfect balance).
double expert_imbalance(const EngineSpec& e, int ep_gpus);

// Loads and validates an engine file (strict: unknown keys are errors; every "sources" key must name a
// field of the file). Errors name the file and the JSON path.
StatusOr<EngineSpec> load_engine(const std::string& path);
// The same from the text of an engine file; `name` stands for the file in messages and its stem is the
// default name. Reads no file.
StatusOr<EngineSpec> parse_engine(const std::string& text, const std::string& name);
// The same from a parsed document (a file's content with a scenario's engine_overrides merged in).
StatusOr<EngineSpec> engine_from_json(const nlohmann::json& doc, const std::string& name);

}  // namespace sim::config
