#include "sim/control/role_changes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <simgrid/s4u/Link.hpp>

#include "sim/core/check.h"
#include "sim/engine/decode_service.h"
#include "sim/engine/dispatcher.h"
#include "sim/engine/prefill_service.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/timeline.h"

namespace sim::control {

using platform::NodeRole;

RoleChanges::RoleChanges(engine::EngineContext& c, engine::PrefillService& prefill,
                         engine::DecodeService& decode, engine::Dispatcher& dispatcher)
    : c_(c),
      prefill_(prefill),
      decode_(decode),
      dispatcher_(dispatcher),
      cv_(simgrid::s4u::ConditionVariable::create()) {
  for (size_t i = 0; i < c_.sc.events.size(); ++i) {
    const auto& e = c_.sc.events[i];
    if (e.kind != "role_change") continue;
    Change ch;
    ch.event = i;
    ch.at_s = e.at_s;
    for (int n : e.nodes) {
      NodeChange nc;
      nc.node = n;
      nc.to = e.to == "prefill" ? NodeRole::kPrefill : NodeRole::kDecode;
      nc.from = nc.to == NodeRole::kPrefill ? NodeRole::kDecode : NodeRole::kPrefill;
      ch.nodes.push_back(nc);
    }
    changes_.push_back(std::move(ch));
  }
  scripted_ = changes_.size();
  live_.push_back({0, c_.members.live_nodes(NodeRole::kPrefill), c_.members.live_nodes(NodeRole::kDecode)});
  c_.members.set_drain_waker([this](int) { cv_->notify_all(); });
}

size_t RoleChanges::actors() const {
  size_t n = 0;
  for (size_t i = 0; i < scripted_; ++i) n += changes_[i].nodes.size();
  return n;
}

void RoleChanges::start() {
  for (size_t i = 0; i < scripted_; ++i)
    for (size_t k = 0; k < changes_[i].nodes.size(); ++k)
      engine::spawn_daemon("role-change", c_.h.control, [this, i, k]() { run(i, k); });
}

size_t RoleChanges::request(int node, NodeRole to) {
  Change ch;
  ch.event = kRequested;
  ch.at_s = engine::now();
  NodeChange nc;
  nc.node = node;
  nc.to = to;
  nc.from = to == NodeRole::kPrefill ? NodeRole::kDecode : NodeRole::kPrefill;
  ch.nodes.push_back(nc);
  changes_.push_back(std::move(ch));
  const size_t i = changes_.size() - 1;
  engine::spawn_daemon("role-change", c_.h.control, [this, i]() { run(i, 0); });
  return i;
}

bool RoleChanges::draining() const {
  for (const auto& ch : changes_)
    for (const auto& nc : ch.nodes)
      if (nc.drain_from_s >= 0 && nc.switched_at_s < 0) return true;
  return false;
}

bool RoleChanges::drained(int node, NodeRole role) const {
  const bool engines = role == NodeRole::kPrefill ? prefill_.idle(node) : decode_.idle(node);
  return engines && c_.buffers.used(node) <= 0 && c_.loads.view().read_q[node] < 0.5;
}

void RoleChanges::run(size_t i, size_t k) {
  const double at = changes_[i].at_s;
  if (at > engine::now()) engine::sleep_for(at - engine::now());
  NodeChange& nc = changes_[i].nodes[k];
  // An earlier change of the node may still be draining it: this one begins once that one has switched.
  // Each wait is tested again after it returns: releasing the lock is a simcall, during which other actors
  // may have changed what it waited for (a prefill pass may have taken the node in again).
  auto ready = [&]() { return c_.members.serves(nc.node, nc.from) && !c_.members.draining(nc.node); };
  while (!ready()) {
    {
      auto lock = c_.run.lock_when(cv_, [&]() { return !ready(); });
      if (c_.run.finished()) return;
    }
  }
  nc.drain_from_s = engine::now();
  nc.requests_at_start = c_.loads.node_requests(nc.node, nc.from == NodeRole::kPrefill);
  c_.members.start_drain(nc.node);
  dispatcher_.drain(nc.node);
  if (on_switch_) on_switch_("role_change drain");
  while (!drained(nc.node, nc.from)) {
    {
      auto lock = c_.run.lock_when(cv_, [&]() { return !drained(nc.node, nc.from); });
      if (c_.run.finished()) return;
    }
  }
  switch_node(nc);
}

void RoleChanges::switch_node(NodeChange& nc) {
  SIM_CHECK(c_.buffers.used(nc.node) <= 0, "node {} switches role holding DRAM buffer", nc.node);
  c_.members.switch_role(nc.node, nc.to);
  prefill_.resize();
  decode_.resize();
  nc.switched_at_s = engine::now();
  nc.p_after = c_.members.live_nodes(NodeRole::kPrefill);
  nc.d_after = c_.members.live_nodes(NodeRole::kDecode);
  live_.push_back({nc.switched_at_s, nc.p_after, nc.d_after});
  if (on_switch_) on_switch_("role_change");
  // Notifications after the changes: the node's new engines are offered requests, later changes of the
  // node may begin, and a node that leaves decode opens its exchange pace link for its prefill passes.
  const auto& node = c_.h.nodes[nc.node];
  if (nc.to == NodeRole::kPrefill && node.exchange_pace != nullptr)
    node.exchange_pace->set_bandwidth(c_.sc.prefill_hardware.cnic_bw_Bps);  // one file: no role change else
  dispatcher_.joined();
  cv_->notify_all();
}

nlohmann::json RoleChanges::node_json(const NodeChange& nc) const {
  auto when = [](double t) { return t < 0 ? nlohmann::json() : nlohmann::json(t); };
  return {{"node", nc.node},
          {"from", platform::name(nc.from)},
          {"requests_at_drain", nc.requests_at_start},
          {"drain_from_s", when(nc.drain_from_s)},
          {"switched_at_s", when(nc.switched_at_s)},
          {"drain_s",
           nc.switched_at_s < 0 ? nlohmann::json() : nlohmann::json(nc.switched_at_s - nc.drain_from_s)}};
}

nlohmann::json RoleChanges::change_json(size_t change) const {
  return node_json(changes_[change].nodes[0]);
}

nlohmann::json RoleChanges::to_json(size_t event) const {
  for (size_t i = 0; i < scripted_; ++i) {
    const Change& ch = changes_[i];
    if (ch.event != event) continue;
    const auto& e = c_.sc.events[event];
    nlohmann::json nodes = nlohmann::json::array();
    int p = -1, d = -1;
    double last = -1;
    for (const auto& nc : ch.nodes) {
      nodes.push_back(node_json(nc));
      if (nc.switched_at_s >= 0 && nc.switched_at_s >= last) {  // the last switch (ties: the later node)
        last = nc.switched_at_s;
        p = nc.p_after;
        d = nc.d_after;
      }
    }
    return {{"kind", e.kind},
            {"at_s", e.at_s},
            {"to", e.to},
            {"nodes", nodes},
            {"prefill_nodes_after", p < 0 ? nlohmann::json() : nlohmann::json(p)},
            {"decode_nodes_after", d < 0 ? nlohmann::json() : nlohmann::json(d)}};
  }
  return {};
}

void RoleChanges::live_changed() {
  live_.push_back(
      {engine::now(), c_.members.live_nodes(NodeRole::kPrefill), c_.members.live_nodes(NodeRole::kDecode)});
}

nlohmann::json RoleChanges::roles_json(double end_s, double interval) const {
  nlohmann::json p_series = nlohmann::json::array(), d_series = nlohmann::json::array(),
                 ratio = nlohmann::json::array(), switches = nlohmann::json::array();
  const int bins = end_s > 0 && interval > 0 ? static_cast<int>(std::ceil(end_s / interval - 1e-9)) : 0;
  for (int b = 0; b < bins; ++b) {
    const double t0 = b * interval, t1 = std::min(end_s, (b + 1) * interval);
    double p = 0, d = 0;
    for (size_t k = 0; k < live_.size(); ++k) {
      const double a = std::max(t0, live_[k].t_s);
      const double z = std::min(t1, k + 1 < live_.size() ? live_[k + 1].t_s : end_s);
      if (z <= a) continue;
      p += live_[k].p * (z - a);
      d += live_[k].d * (z - a);
    }
    p /= t1 - t0;
    d /= t1 - t0;
    p_series.push_back(p);
    d_series.push_back(d);
    ratio.push_back(p / d);
  }
  for (size_t k = 1; k < live_.size(); ++k)
    switches.push_back({{"t_s", live_[k].t_s}, {"prefill_nodes", live_[k].p}, {"decode_nodes", live_[k].d}});
  return {{"prefill_nodes_start", live_.front().p},
          {"decode_nodes_start", live_.front().d},
          {"prefill_nodes_end", live_.back().p},
          {"decode_nodes_end", live_.back().d},
          {"switches", switches},
          {"series_interval_s", interval},
          {"prefill_nodes_series", p_series},
          {"decode_nodes_series", d_series},
          {"pd_series", ratio}};
}

void RoleChanges::mark(metrics::Timeline& timeline, double end_s) const {
  for (const auto& ch : changes_)
    for (const auto& nc : ch.nodes) {
      if (nc.drain_from_s < 0) continue;
      timeline.scenario_event(fmt::format("role_change n{} {} -> {} (drain)", nc.node,
                                          platform::name(nc.from), platform::name(nc.to)),
                              nc.drain_from_s, nc.switched_at_s >= 0 ? nc.switched_at_s : end_s, 1.0);
    }
}

}  // namespace sim::control
