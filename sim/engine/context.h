// EngineContext: what every engine service shares, by reference (owned by the Cluster, the composition
// root). A service reaches the others only through their methods.
#pragma once

#include <vector>

#include "sim/config/scenario.h"
#include "sim/control/run_control.h"
#include "sim/engine/gpu_compute.h"
#include "sim/engine/load_book.h"
#include "sim/engine/membership.h"
#include "sim/engine/recorder.h"
#include "sim/engine/request_store.h"
#include "sim/platform/handles.h"
#include "sim/resources/buffer_pool.h"
#include "sim/resources/hbm_pool.h"
#include "sim/storage/prefix_store.h"
#include "sim/storage/storage_backend.h"
#include "sim/transport/transport.h"

namespace sim::metrics {
class RequestLog;
class Timeline;
}  // namespace sim::metrics

namespace sim::engine {

// The turn milestones the control side follows (control/driver.h).
class TurnEvents {
 public:
  virtual ~TurnEvents() = default;
  // The request's prefill produced its first token, now.
  virtual void first_token(RequestId id) = 0;
  // The request generated its last token at `t_done`; the engines are done with it (its slot is freed).
  virtual void turn_done(RequestId id, double t_done) = 0;
};

struct EngineContext {
  const config::ScenarioConfig& sc;
  const platform::PlatformHandles& h;
  control::RunControl& run;
  RequestStore& requests;
  LoadBook& loads;
  resources::BufferPool& buffers;
  resources::HbmPool& hbm;
  transport::Transport& transport;
  storage::StorageBackend& storage;
  // Which prefix of each agent's context storage holds (storage.capacity_bytes).
  storage::PrefixStore& stored;
  // Per node, the prefixes its DRAM tier holds (cache.dram_bytes); empty without a tier.
  std::vector<storage::PrefixStore>& dram_tier;
  GpuCompute& gpu;
  Recorder& rec;
  // Which role each node serves now and which take new requests (role_change events).
  Membership& members;
  double kv_token = 0;        // KV bytes per token, all layers
  double kv_token_layer = 0;  // KV bytes per token per layer
  metrics::Timeline* timeline = nullptr;
  metrics::RequestLog* request_log = nullptr;  // outputs.requests, or null
};

// The deployment unit (config/units.h) of each engine of role r, in Membership::engines(r) order: for an EP
// model Membership::unit_of_engines at the scenario's unit size; a model that holds its whole weights on
// every GPU runs each engine alone (its own unit, joiners too).
std::vector<int> engine_units(const EngineContext& c, platform::NodeRole r);

// Sleeps `seconds` of simulated time, counted as a timed activity (the watchdog's sign of progress).
void timed_sleep(EngineContext& c, double seconds);

}  // namespace sim::engine
