// Cluster: the composition root of one run's engine. It builds the shared pieces (run control, request
// store, loads, DRAM buffers, DE HBM, storage backend, GPU compute), the services (reader, prefill,
// decode, dispatcher) and the control actors (driver, stop rules, watchdog), wires them, and starts them.
// Everything it owns is by value or unique_ptr; it holds no state of its own beyond them.
//
// Life of a turn: Driver::issue -> Dispatcher (scheduler: PE and DE; read-path policy: read side and
// transport) -> ReaderService (storage -> the chosen node's buffer) -> PrefillService (forward passes:
// KV loads, compute, KV pushes to the DE buffer) -> DecodeService (HBM, H2D, continuous batch, persist)
// -> Driver::turn_done -> the agent's next turn.
#pragma once

#include <memory>
#include <vector>

#include "sim/config/scenario.h"
#include "sim/control/autoscaler.h"
#include "sim/control/driver.h"
#include "sim/control/node_failures.h"
#include "sim/control/role_changes.h"
#include "sim/control/run_control.h"
#include "sim/control/stop_rules.h"
#include "sim/control/watchdog.h"
#include "sim/engine/context.h"
#include "sim/engine/decode_service.h"
#include "sim/engine/dispatcher.h"
#include "sim/engine/prefill_service.h"
#include "sim/engine/reader_service.h"
#include "sim/storage/direct_backend.h"

namespace sim::engine {

class Cluster {
 public:
  // All references must outlive the cluster. REQUIRES: the platform of `h` is built; `t` runs on it.
  Cluster(const config::ScenarioConfig& sc, const platform::PlatformHandles& h,
          const std::vector<workload::Agent>& agents, std::unique_ptr<policy::SchedulerPolicy> scheduler,
          std::unique_ptr<policy::ReadPathPolicy> read_path, Recorder& recorder, transport::Transport& t,
          metrics::Timeline* timeline, metrics::RequestLog* request_log);

  control::Driver& driver() { return driver_; }
  // Spawns every actor.
  void start();
  // How many actors start() spawns (the driver's think-time timers come later, one per agent at most).
  size_t actors() const;
  // Closes the engines' accounts after the run (the decode groups' busy time).
  void finish() { decode_.finish(); }

  const control::RunControl& run() const { return run_; }
  const control::StopRules& stop_rules() const { return stop_rules_; }
  const std::vector<PrefillEngineState>& pes() const { return prefill_.engines(); }
  const std::vector<DecodeEngineState>& des() const { return decode_.engines(); }
  const resources::BufferPool& buffers() const { return buffers_; }
  const resources::HbmPool& hbm() const { return hbm_; }
  const storage::PrefixStore& stored() const { return stored_; }
  const control::RoleChanges& role_changes() const { return role_changes_; }
  const control::NodeFailures& node_failures() const { return node_failures_; }
  // Per node: non-zero while it is down (node_down events).
  const std::vector<char>& down_nodes() const { return members_.down_nodes(); }
  // `f` is called after each node failure and recovery (control/node_failures.h).
  void on_node_change(std::function<void(const char* why)> f) { node_failures_.on_change(std::move(f)); }
  // Each node's role now, the nodes draining, and a hook called when a drain begins and after every switch.
  const std::vector<platform::NodeRole>& roles() const { return members_.roles(); }
  const std::vector<char>& draining_nodes() const { return members_.draining_nodes(); }
  void on_role_switch(std::function<void(const char* why)> f) { role_changes_.on_switch(std::move(f)); }
  // Whether the live roles may change in this run (role_change events, an autoscaler, node failures).
  bool roles_may_change() const { return members_.dynamic(); }
  // Whether nodes fail in this run (node_down events).
  bool nodes_may_fail() const { return node_failures_.actors() > 0; }
  const control::Autoscaler& autoscaler() const { return autoscaler_; }
  // The live bottleneck-free range the autoscaler's guard reads.
  void watch_live(const cost::LivePoint* live) { autoscaler_.watch(live); }
  const std::vector<storage::PrefixStore>& dram_tier() const { return dram_tier_; }
  double kv_bytes_per_token() const { return ctx_.kv_token; }

 private:
  // Sizes every piece is built with, computed once.
  struct Sizes {
    Sizes(const config::ScenarioConfig& sc, const platform::PlatformHandles& h);
    double kv_token;        // KV bytes per token, all layers
    double kv_token_layer;  // KV bytes per token per layer
    double de_hbm_kv;       // a DE GPU's HBM for KV (the decode role's weight shards)
  };
  const Sizes sizes_;
  Membership members_;
  control::RunControl run_;
  RequestStore requests_;
  LoadBook loads_;
  resources::BufferPool buffers_;
  resources::HbmPool hbm_;
  storage::DirectBackend storage_;
  storage::PrefixStore stored_;
  std::vector<storage::PrefixStore> dram_tier_;
  GpuCompute gpu_;
  EngineContext ctx_;
  ReaderService reader_;
  PrefillService prefill_;
  DecodeService decode_;
  Dispatcher dispatcher_;
  control::RoleChanges role_changes_;
  control::Driver driver_;
  control::NodeFailures node_failures_;
  control::Autoscaler autoscaler_;
  control::StopRules stop_rules_;
  control::Watchdog watchdog_;
};

}  // namespace sim::engine
