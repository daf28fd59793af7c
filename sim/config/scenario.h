// ScenarioConfig: one runnable what-if, loaded strictly from scenarios/**/*.json (+ --set overrides).
// Every field has a default, documented in scenarios/README.md. The resolved scenario is echoed into the
// results JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/de_buffer.h"
#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/core/status.h"

namespace sim::config {

struct ClusterConfig {
  int prefill_nodes = 2;            // P
  int decode_nodes = 4;             // D
  double dram_buffer_bytes = 80e9;  // per node: PE/DE buffer capacity (DualPath §A.4: 80 GB for DeepSeek)
  int prefill_dp_group_gpus = 0;    // EP models: PE GPUs that run each layer together (DP attention);
                                    // 0 = the EP group (the prefill unit); divides the unit
  // Deployment units (config/units.h): GPUs per prefill / decode EP group. -1 = the model file's
  // params.<role>_ep_gpus (resolved at load); 0 = one unit spanning the role.
  int prefill_ep_gpus = -1;
  int decode_ep_gpus = -1;
  DeBuffer de_buffer = DeBuffer::kDram;  // where a request's KV waits for its decode (de_buffer.h)
};

struct GeneratorConfig {
  std::string dataset = "64k";  // 32k | 48k | 64k (Table 2 of the paper)
  int trajectories = 500;
  uint64_t seed = 1;
};

// Online-mode stop rules (scenarios/README.md, "workload.online"). A rule is checked every
// check_interval_s of simulated time; the TTFT of a turn counts at the time of its first token.
struct OnlineConfig {
  bool stop_on_slo = true;         // stop when the windowed mean TTFT exceeds slo.ttft_s
  double slo_window_s = 60;        // that window, s (not given by the paper)
  int slo_min_turns = 20;          // the rule waits until the window holds this many turns (not given)
  bool stop_on_steady = true;      // stop at steady state (DualPath §7.4)
  double steady_window_s = 150;    // mean TTFT over this window ...
  double steady_lag_s = 1800;      // ... within steady_tolerance of the same window this much earlier
  double steady_tolerance = 0.05;  // relative
  double check_interval_s = 10;    // how often the rules are evaluated, s
};

struct WorkloadConfig {
  std::string mode = "offline";  // offline | online
  std::string trace;             // resolved path of the trace file; empty = use `generator` (native only)
  // native (trajectory JSONL) | mooncake (JSONL) | azure (CSV) | alibaba (JSONL)
  std::string trace_format = "native";
  // A turn longer than the model's context: "error" (exit 2), or "drop" it (replay: the request; agents:
  // the trajectory ends before it).
  std::string over_context = "error";
  GeneratorConfig generator;
  int agents = 2048;
  int max_turns = 0;  // 0 = whole trajectories; >0 truncates each trajectory
  double aps = 1.0;   // online: agent arrivals per second
  // online: from aps_change_at_s on, arrivals come at aps_after per second (-1: no change).
  double aps_change_at_s = -1;
  double aps_after = 0;
  // DualPath Fig. 9: each turn's append (gen) tokens times this, then each trajectory cut at the dataset's
  // MaxLen (sim/workload/scaling.h). Trajectories only (native traces, the generator).
  double append_scale = 1.0;
  double gen_scale = 1.0;
  OnlineConfig online;
};

// Service-level objective (DualPath §7.4: TTFT <= 4 s and TPOT <= 50 ms). A run meets the SLO when it was
// not stopped by the TTFT rule and its `statistic` of TTFT and of TPOT are within the bounds.
struct SloConfig {
  double ttft_s = 4.0;
  double tpot_s = 0.05;
  std::string statistic = "mean";  // mean | p50 | p90 | p99
  // Online: the turns judged are those whose first token came after the warm-up, and the TTFT stop rule
  // waits for it (scenarios/README.md, "slo"). kAutoWarmup: it ends at the first check at which the
  // agents' first turns are at most twice their steady-state share of the turns in the SLO window.
  static constexpr double kAutoWarmup = -1;
  double warmup_s = kAutoWarmup;
  // absolute: the bounds above, on slo.statistic of the judged turns' TTFT and TPOT. relative: each turn
  // against a multiple of its own unloaded latency (cost/unloaded.h): it meets the SLO when its TTFT <=
  // ttft_scale x its unloaded TTFT and its TPOT <= tpot_scale x its unloaded TPOT; the run meets it when
  // the share of judged turns that do is at least `attainment` (scenarios/README.md, "slo").
  std::string mode = "absolute";  // absolute | relative
  double ttft_scale = 0;          // relative: required, > 1
  double tpot_scale = 0;          // relative: required, > 1
  double attainment = 0.9;        // relative: in (0, 1]
  bool relative() const { return mode == "relative"; }
};

struct PolicyConfig {
  std::string read_path = "dualpath";  // registry name (pe, de, dualpath, split, oracle)
  std::string scheduler = "round_robin";
  bool layerwise = true;
  // How each layer's EP exchange overlaps its compute: engine (the engine file's exchange.overlap) |
  // two_micro_batches (DeepSeek's published inference system) | none | ideal (free overlap, no micro-batch
  // cost); models/engine/README.md, "Overlap and fixed costs"
  std::string ep_overlap = "engine";
  // false: the engine file's fixed costs (exchange.latency, kernels.*_overhead_s, the CPU time per pass and
  // per step) are taken as 0
  bool fixed_costs = true;
  // fifo: a GPU's ready requests FIFO, bounded by the engine's largest pass and HBM; quota: the paper's
  // intra-engine scheduler (§6.2), FIFO under the compute quota with the last request cut
  std::string batching = "fifo";  // fifo | quota
  double compute_quota_s = 0.3;   // DualPath §A.4
  // What the quota bounds: pass = a GPU's predicted attention over the whole forward pass (all layers), the
  // reading under which it binds; layer = one layer's (scenarios/README.md, "The compute quota's scope").
  std::string quota_scope = "pass";  // pass | layer
  double fetch_period_s = 0.05;      // scheduler fetch period (not given by the paper)
  int pe_group_nodes = 0;            // queued schedulers: prefill nodes per PE group; 0 = one group of all
  double alpha_tokens = 0;           // dualpath scheduler: short-read-queue threshold; 0 = 3 s of reads
  double beta_tokens = 0;            // dualpath scheduler: PE unfinished-token cap; 0 = 5 s of prefill
  int persist_block_tokens = 64;     // decode persistence granularity
  bool persist_append = true;        // the DE persists the appended tokens' KV too
  // off | on: outside the live bottleneck-free P/D range, reads split by the best DE-path share
  // (policy/pd_guard.h); inside it the read-path policy decides alone
  std::string pd_guard = "off";
};

// The KV tier in storage (sim/storage/prefix_store.h; the storage's bandwidth is the hardware file's).
struct StorageConfig {
  double capacity_bytes = 0;     // KV the storage holds across agents; 0 = unlimited (no eviction)
  std::string eviction = "lru";  // registry name (policy/policies.def): whose prefix loses its tail first
};

// A KV tier in each node's DRAM (sim/storage/prefix_store.h), beside the DRAM buffers.
struct CacheConfig {
  double dram_bytes = 0;         // per node; 0 = no tier (the DRAM buffers keep nothing after a turn)
  std::string eviction = "lru";  // registry name (policy/policies.def)
};

struct SimConfig {
  int layer_group = 0;  // layers simulated together; 0 = fluid pipeline (sim/engine/forward_pass.h)
  double persist_interval_s = 2.0;  // a DE's persistence writes are coalesced over this long; 0 = none
  int read_depth = 4;               // storage reads in flight per node
  double time_limit_s = 0;          // 0 = none
  bool progress = true;
  // A decode group's EP exchange keeps its pace while its flows' lead over the steps stays within
  // pace_band x rate x DecodeService::kPaceHorizonS (scenarios/README.md): every change of a pace is a new
  // max-min solve. 0 = re-paced at every plan.
  double pace_band = 0.5;
};

// How the CNICs share bandwidth between the traffic classes (DESIGN.md, "Two traffic classes share the
// CNICs"): "none" = max-min fair between all flows; "priority" = weighted by class, with the hardware's
// qos weights (the paper's InfiniBand virtual lanes).
struct NetworkConfig {
  std::string qos = "none";
};

struct OutputConfig {
  std::string results;                // results JSON path ("" = out/<scenario>.json)
  double timeseries_interval_s = 10;  // 0 = no time series
  double window_s = 1.0;              // window for peak utilisation and balance metrics
  // Chrome trace-event timeline (sim/metrics/timeline.h), written as is (relative to the working
  // directory, like `results`); "" = off.
  std::string timeline;
  // Per-turn records (sim/metrics/request_log.h): a .csv or .jsonl path, written as is; "" = off.
  std::string requests;
  double timeline_start_s = 0;           // simulated window recorded, s
  double timeline_end_s = 600;           // > timeline_start_s
  int64_t timeline_max_events = 200000;  // cap on events; the file says "truncated" when it is reached
  int timeline_request_sample = 0;       // turns of every k-th agent; 0 = auto (about 64 agents)
};

// A timed event (scenarios/README.md, "events"; control/events.h). link_degrade: over [at_s, until_s) the
// matching link directions of one node run at `factor` of their bandwidth. role_change: from at_s the
// nodes drain, then serve role `to` (control/role_changes.h).
struct EventConfig {
  std::string kind = "link_degrade";  // link_degrade | role_change | node_down | node_up
  double at_s = 0;
  double until_s = 0;      // link_degrade only
  int node = 0;            // link_degrade only
  std::vector<int> nodes;  // role_change, node_down, node_up: distinct node indices
  std::string to;          // role_change only: prefill | decode
  std::string resource;    // snic | cnic | dram | storage
  std::string direction;   // snic: in | out; cnic, storage: read | write; "" = every direction
  int gpu = -1;            // cnic: one GPU's; -1 = every GPU's of the node
  double factor = 1;       // (0, 1]
};

// control.autoscale (control/autoscaler.h): converts node roles at run time from live signals.
struct AutoscaleConfig {
  std::string policy = "off";   // off | slo
  double interval_s = 60;       // how often the signals are read
  double min_interval_s = 600;  // from one conversion's start to the next's
  double relax = 0.5;           // a side is relaxed when its latency is below relax x its SLO bound
  bool guard = true;            // veto a conversion that takes a live P/D inside the range out of it
};

struct ControlConfig {
  AutoscaleConfig autoscale;
};

struct ScenarioConfig {
  std::string file;
  std::string name;
  std::string description;    // free text
  std::string hardware_file;  // resolved path of the `hardware` file: both roles' unless overridden
  std::string model_file;     // resolved path of the model file
  // Hardware per role: every node of a role is built from its role's file, and the cost models use it
  // (prefill passes the prefill file, decode steps the decode file). `hardware_prefill` / `hardware_decode`
  // when the scenario gives them, else the `hardware` file. With one file both are the same spec.
  std::string prefill_hardware_file;  // resolved paths
  std::string decode_hardware_file;
  HardwareSpec prefill_hardware;
  HardwareSpec decode_hardware;
  // The two roles' files are different files. Then no node changes role (role_change events and
  // control.autoscale are refused at load: a node keeps its GPUs), and under network.qos = priority both
  // files give the same class weights.
  bool mixed_hardware = false;
  // The serving engine's software (config/engine.h): `engine` (a name under models/engine/ or a path;
  // default kDefaultEngine), with the scenario's `engine_overrides` merged into the file, then
  // policy.ep_overlap and policy.fixed_costs applied.
  std::string engine_file;  // resolved path
  EngineSpec engine;
  ModelSpec model;
  ClusterConfig cluster;
  WorkloadConfig workload;
  SloConfig slo;
  PolicyConfig policy;
  StorageConfig storage;
  CacheConfig cache;
  SimConfig sim;
  NetworkConfig network;
  OutputConfig outputs;
  ControlConfig control;
  std::vector<EventConfig> events;  // in the file's order
  uint64_t seed = 1;
  nlohmann::json resolved;  // the scenario with every default filled in (file references as written)
  // The optional top-level "expect" bands of `dpsim check`, validated but kept as written (null when absent).
  // Format in scenarios/README.md, "Expectations"; evaluated by sim/study/check.cpp.
  nlohmann::json expect;
};

// The engine a scenario without `engine` runs: the DualPath paper's (models/engine/dualpath-paper.json).
inline constexpr const char* kDefaultEngine = "dualpath-paper";

// The price of one node per hour, averaged over the cluster's nodes (P prefill, D decode) at their roles'
// files' cost.per_node_hour; unset when either role's file gives none.
std::optional<double> mean_cost_per_node_hour(const ScenarioConfig& sc);

// Loads `path`, applies each `--set key=value` in order, resolves the hardware and model files (relative
// to the scenario's directory, then to the project root), and validates everything. Errors name the
// file and the JSON path.
StatusOr<ScenarioConfig> load_scenario(const std::string& path, const std::vector<std::string>& overrides);
// The same from the text of a scenario file. `name` stands for the scenario file: in messages, as the
// default scenario name (its stem) and as the directory that relative references are resolved from. The
// only files read are the hardware and model files the scenario references.
StatusOr<ScenarioConfig> parse_scenario(const std::string& text, const std::string& name,
                                        const std::vector<std::string>& overrides);

}  // namespace sim::config
