#include "sim/control/events.h"

#include <fmt/format.h>

#include <algorithm>
#include <simgrid/s4u/Link.hpp>
#include <string>
#include <tuple>

#include "sim/engine/sg_compat.h"
#include "sim/metrics/timeline.h"

namespace sim::control {

namespace {

bool matches(const config::EventConfig& e, const platform::TrackedLink& l) {
  return l.node == e.node && platform::name(l.resource) == e.resource &&
         (e.direction.empty() || l.direction == e.direction) && (e.gpu < 0 || l.gpu == e.gpu);
}

std::string link_name(const platform::TrackedLink& l) {
  return l.gpu >= 0 ? fmt::format("n{} {} {} gpu{}", l.node, platform::name(l.resource), l.direction, l.gpu)
                    : fmt::format("n{} {} {}", l.node, platform::name(l.resource), l.direction);
}

}  // namespace

StatusOr<EventRunner> EventRunner::make(const config::ScenarioConfig& sc,
                                        const platform::PlatformHandles& h) {
  EventRunner r;
  r.h_ = &h;
  for (size_t i = 0; i < sc.events.size(); ++i) {
    Played p;
    p.cfg = sc.events[i];
    if (p.cfg.kind != "link_degrade") {  // played by the engine's RoleChanges
      r.events_.push_back(std::move(p));
      continue;
    }
    for (const auto& l : h.links)
      if (matches(p.cfg, l)) p.links.push_back(&l);
    if (p.links.empty())
      return Status::error(fmt::format(
          "{}: events[{}].resource: node {} has no {} link{} (\"storage\" is a link only when the storage "
          "backend is slower than the SNIC: {} sets storage.efficiency = 1 and no per-node bandwidth)",
          sc.file, i, p.cfg.node, p.cfg.resource,
          p.cfg.direction.empty() ? "" : fmt::format(" in direction {}", p.cfg.direction),
          p.cfg.node < sc.cluster.prefill_nodes ? sc.prefill_hardware_file : sc.decode_hardware_file));
    r.events_.push_back(std::move(p));
  }
  return r;
}

void EventRunner::start() {
  if (events_.empty()) return;
  engine::spawn_daemon("events", h_->control, [this]() { play(); });
}

void EventRunner::play() {
  // Every edge in time order; at one instant, restorations before degradations (back to back windows of
  // one link), then the file's order.
  std::vector<std::tuple<double, int, size_t>> edges;  // (time, 0 = restore | 1 = apply, event)
  for (size_t i = 0; i < events_.size(); ++i) {
    if (events_[i].cfg.kind != "link_degrade") continue;
    edges.emplace_back(events_[i].cfg.at_s, 1, i);
    edges.emplace_back(events_[i].cfg.until_s, 0, i);
  }
  std::sort(edges.begin(), edges.end());
  for (const auto& [t, apply, i] : edges) {
    if (t > engine::now()) engine::sleep_for(t - engine::now());
    Played& p = events_[i];
    for (const platform::TrackedLink* l : p.links)
      l->link->set_bandwidth(apply ? l->bandwidth_Bps * p.cfg.factor : l->bandwidth_Bps);
    (apply ? p.applied_at_s : p.restored_at_s) = engine::now();
    if (live_ != nullptr)
      live_->update(engine::now(), fmt::format("events[{}] {}", i, apply ? "applied" : "restored").c_str());
  }
}

void EventRunner::mark(metrics::Timeline& timeline, double end_s) const {
  for (const auto& p : events_) {
    if (p.cfg.kind != "link_degrade" || p.applied_at_s < 0) continue;
    const std::string target = fmt::format("n{} {}{}{}", p.cfg.node, p.cfg.resource,
                                           p.cfg.direction.empty() ? "" : " " + p.cfg.direction,
                                           p.cfg.gpu >= 0 ? fmt::format(" gpu{}", p.cfg.gpu) : "");
    timeline.scenario_event(fmt::format("{} {} x{:g}", p.cfg.kind, target, p.cfg.factor), p.applied_at_s,
                            p.restored_at_s >= 0 ? p.restored_at_s : end_s, p.cfg.factor);
  }
}

nlohmann::json EventRunner::to_json(const std::function<nlohmann::json(size_t)>& other) const {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < events_.size(); ++i) {
    const Played& p = events_[i];
    if (p.cfg.kind != "link_degrade") {
      out.push_back(other(i));
      continue;
    }
    nlohmann::json links = nlohmann::json::array();
    for (const auto* l : p.links) links.push_back(link_name(*l));
    auto when = [](double t) { return t < 0 ? nlohmann::json() : nlohmann::json(t); };
    out.push_back({{"kind", p.cfg.kind},
                   {"at_s", p.cfg.at_s},
                   {"until_s", p.cfg.until_s},
                   {"factor", p.cfg.factor},
                   {"links", links},
                   {"applied_at_s", when(p.applied_at_s)},
                   {"restored_at_s", when(p.restored_at_s)}});
  }
  return out;
}

}  // namespace sim::control
