#include "sim/engine/cluster.h"

#include "sim/config/units.h"
#include "sim/core/check.h"
#include "sim/cost/compute_model.h"
#include "sim/policy/registry.h"

namespace sim::engine {

namespace {

// Engine i of a role sits on node engine_nodes(m, role)[i] (Membership::engines).
std::vector<int> engine_nodes(const Membership& m, platform::NodeRole role) {
  std::vector<int> out;
  for (const auto& e : m.engines(role)) out.push_back(e.first);
  return out;
}

std::vector<platform::NodeRole> roles_of(const platform::PlatformHandles& h) {
  std::vector<platform::NodeRole> out;
  for (const auto& n : h.nodes) out.push_back(n.role);
  return out;
}

std::vector<int> gpus_of_nodes(const platform::PlatformHandles& h) {
  std::vector<int> out;
  out.reserve(h.nodes.size());
  for (int n = 0; n < static_cast<int>(h.nodes.size()); ++n) out.push_back(h.gpus_on(n));
  return out;
}

// An eviction policy by name (validated with the scenario), or null for an unlimited tier.
std::unique_ptr<policy::EvictionPolicy> eviction(double capacity, const std::string& name) {
  if (capacity <= 0) return nullptr;
  auto p = policy::make_eviction(name);
  SIM_CHECK(static_cast<bool>(p), "eviction: {}", p.status().message());
  return std::move(*p);
}

// cache.dram_bytes: one tier per node, or none.
std::vector<storage::PrefixStore> make_dram_tier(const config::ScenarioConfig& sc, size_t nodes,
                                                 double kv_token) {
  std::vector<storage::PrefixStore> out;
  if (sc.cache.dram_bytes <= 0) return out;
  for (size_t n = 0; n < nodes; ++n)
    out.emplace_back(sc.cache.dram_bytes / kv_token, sc.policy.persist_block_tokens,
                     eviction(sc.cache.dram_bytes, sc.cache.eviction));
  return out;
}

}  // namespace

Cluster::Sizes::Sizes(const config::ScenarioConfig& sc, const platform::PlatformHandles& /*h*/)
    : kv_token(cost::kv_bytes_per_token(sc.model)),
      kv_token_layer(cost::kv_bytes_per_token_layer(sc.model)),
      de_hbm_kv(cost::hbm_kv_bytes_per_gpu(
          sc.model, sc.decode_hardware,
          cost::weight_shards_for_role(sc.model, config::unit_gpus(sc, config::UnitRole::kDecode)))) {}

Cluster::Cluster(const config::ScenarioConfig& sc, const platform::PlatformHandles& h,
                 const std::vector<workload::Agent>& agents,
                 std::unique_ptr<policy::SchedulerPolicy> scheduler,
                 std::unique_ptr<policy::ReadPathPolicy> read_path, Recorder& recorder,
                 transport::Transport& t, metrics::Timeline* timeline, metrics::RequestLog* request_log)
    : sizes_(sc, h),
      members_(roles_of(h), sc.events, gpus_of_nodes(h), sc.control.autoscale.policy != "off"),
      loads_(engine_nodes(members_, platform::NodeRole::kPrefill),
             engine_nodes(members_, platform::NodeRole::kDecode), static_cast<int>(h.nodes.size()),
             sizes_.de_hbm_kv),
      buffers_(static_cast<int>(h.nodes.size()), sc.cluster.dram_buffer_bytes, sizes_.kv_token),
      hbm_(loads_, static_cast<int>(members_.engines(platform::NodeRole::kDecode).size()), sizes_.de_hbm_kv,
           sizes_.kv_token),
      storage_(h, t),
      stored_(sc.storage.capacity_bytes / sizes_.kv_token, sc.policy.persist_block_tokens,
              eviction(sc.storage.capacity_bytes, sc.storage.eviction), sc.outputs.timeseries_interval_s),
      dram_tier_(make_dram_tier(sc, h.nodes.size(), sizes_.kv_token)),
      gpu_(recorder, t),
      ctx_{sc,
           h,
           run_,
           requests_,
           loads_,
           buffers_,
           hbm_,
           t,
           storage_,
           stored_,
           dram_tier_,
           gpu_,
           recorder,
           members_,
           sizes_.kv_token,
           sizes_.kv_token_layer,
           timeline,
           request_log},
      reader_(ctx_),
      prefill_(ctx_),
      decode_(ctx_),
      dispatcher_(ctx_, std::move(scheduler), std::move(read_path)),
      role_changes_(ctx_, prefill_, decode_, dispatcher_),
      driver_(ctx_, agents, dispatcher_),
      node_failures_(ctx_, reader_, prefill_, decode_, dispatcher_, driver_),
      autoscaler_(ctx_, role_changes_, driver_.ttft_log()),
      stop_rules_(sc, driver_.ttft_log(), run_),
      watchdog_(ctx_) {
  reader_.connect(&prefill_);
  prefill_.connect(&decode_, &dispatcher_, &driver_);
  decode_.connect(&dispatcher_, &driver_);
  dispatcher_.connect(&reader_, &prefill_);
  node_failures_.on_live_change([this]() { role_changes_.live_changed(); });
  // At the end of the run every actor is woken and returns (fetchers, lanes, engines, the driver).
  run_.on_finish([this]() {
    // A run stopped before its turns were done leaves no GPU work running (GpuCompute::halt).
    if (run_.stopped_by() != "all_turns_done") gpu_.halt();
    dispatcher_.wake_all();
    buffers_.wake_all();
    prefill_.wake_all();
    decode_.wake_all();
    driver_.wake_all();
    role_changes_.wake_all();
  });
  t.count_other_in_flight(&recorder.timed_in_flight);
}

size_t Cluster::actors() const {
  const size_t control = 3 + (ctx_.sc.workload.mode == "online" ? 1 : 0);  // driver, watchdog, time limit
  return reader_.actors() + prefill_.actors() + dispatcher_.actors() + decode_.actors() +
         role_changes_.actors() + node_failures_.actors() + autoscaler_.actors() + control;
}

void Cluster::start() {
  reader_.start();
  prefill_.start();
  dispatcher_.start();
  decode_.start();
  role_changes_.start();
  node_failures_.start();
  autoscaler_.start();
  watchdog_.start();
  if (ctx_.sc.workload.mode == "online") stop_rules_.start(ctx_.h.control);
  driver_.start();
}

}  // namespace sim::engine
