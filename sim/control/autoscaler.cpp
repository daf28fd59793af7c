#include "sim/control/autoscaler.h"

#include "sim/cost/bottleneck.h"
#include "sim/engine/sg_compat.h"

namespace sim::control {

using platform::NodeRole;

Autoscaler::Autoscaler(engine::EngineContext& c, RoleChanges& changes, const TtftLog& ttft)
    : c_(c), changes_(changes), ttft_(ttft) {}

void Autoscaler::start() {
  if (on()) engine::spawn_daemon("autoscale", c_.h.control, [this]() { loop(); });
}

double Autoscaler::buffer_fill(NodeRole role) const {
  double used = 0;
  int nodes = 0;
  for (int n = 0; n < static_cast<int>(c_.h.nodes.size()); ++n)
    if (c_.members.accepting(n, role)) {
      used += c_.buffers.used(n);
      nodes++;
    }
  return nodes > 0 && c_.buffers.capacity() > 0 ? used / (nodes * c_.buffers.capacity()) : 0;
}

int Autoscaler::pick(NodeRole role) const {
  const bool pe = role == NodeRole::kPrefill;
  int best = -1, best_load = 0;
  for (int n = 0; n < static_cast<int>(c_.h.nodes.size()); ++n) {
    if (!c_.members.accepting(n, role)) continue;
    const int load = c_.loads.node_requests(n, pe);
    if (best < 0 || load < best_load) best = n, best_load = load;
  }
  return best;
}

void Autoscaler::loop() {
  const auto& a = c_.sc.control.autoscale;
  const auto& slo = c_.sc.slo;
  while (!c_.run.finished()) {
    engine::sleep_for(a.interval_s);
    if (c_.run.finished()) return;
    ticks_++;
    const double now = engine::now();
    // The signals over the last interval.
    double ttft_sum = 0, tpot_sum = 0;
    int ttft_n = 0, tpot_n = 0;
    for (; cursor_ < c_.rec.turns.size(); ++cursor_) {
      const auto& t = c_.rec.turns[cursor_];
      ttft_sum += t.ttft;
      ttft_n++;
      if (t.tpot >= 0) {
        tpot_sum += t.tpot;
        tpot_n++;
      }
    }
    const double ttft = c_.sc.workload.mode == "online" ? ttft_.windowed_mean(now, a.interval_s, 1)
                                                        : (ttft_n > 0 ? ttft_sum / ttft_n : -1);
    const double tpot = tpot_n > 0 ? tpot_sum / tpot_n : -1;
    if (ttft < 0 || tpot < 0) continue;  // nothing to judge by
    const double pe_fill = buffer_fill(NodeRole::kPrefill), de_fill = buffer_fill(NodeRole::kDecode);
    if (changes_.draining() || (last_start_s_ >= 0 && now - last_start_s_ < a.min_interval_s)) continue;
    // Where the turns wait: read-ahead KV fills the DRAM buffers in front of the side that consumes it (PE
    // buffers: the prefill; DE buffers: decode HBM). A side whose buffers are at least `relax` full blocks;
    // when both do, the cluster is short of more than a role split can give, and nothing is converted.
    const bool pe_blocks = pe_fill >= a.relax, de_blocks = de_fill >= a.relax;
    NodeRole to;
    if (ttft > slo.ttft_s && !de_blocks && tpot < a.relax * slo.tpot_s) {
      to = NodeRole::kPrefill;
    } else if ((tpot > slo.tpot_s && ttft < a.relax * slo.ttft_s) ||
               (ttft > slo.ttft_s && de_blocks && !pe_blocks)) {
      to = NodeRole::kDecode;
    } else {
      continue;
    }
    const NodeRole from = to == NodeRole::kPrefill ? NodeRole::kDecode : NodeRole::kPrefill;
    const int p = c_.members.live_nodes(NodeRole::kPrefill), d = c_.members.live_nodes(NodeRole::kDecode);
    if (c_.members.live_nodes(from) <= 1) continue;
    const int node = pick(from);
    if (node < 0) continue;
    const int p2 = to == NodeRole::kPrefill ? p + 1 : p - 1, d2 = to == NodeRole::kPrefill ? d - 1 : d + 1;
    if (a.guard && live_ != nullptr && live_->inside && !cost::pd_inside(live_->range, p2, d2)) {
      vetoed_++;
      continue;
    }
    last_start_s_ = now;
    actions_.push_back({now, node, to, ttft, tpot, pe_fill, de_fill, changes_.request(node, to)});
  }
}

nlohmann::json Autoscaler::to_json() const {
  if (!on()) return nullptr;
  nlohmann::json actions = nlohmann::json::array();
  for (const auto& x : actions_) {
    nlohmann::json j = changes_.change_json(x.change);
    j["t_s"] = x.t_s;
    j["to"] = platform::name(x.to);
    j["ttft_s"] = x.ttft_s;
    j["tpot_s"] = x.tpot_s;
    j["pe_buffer_fill"] = x.pe_fill;
    j["de_buffer_fill"] = x.de_fill;
    actions.push_back(j);
  }
  return {{"policy", c_.sc.control.autoscale.policy},
          {"ticks", ticks_},
          {"vetoed", vetoed_},
          {"actions", actions}};
}

}  // namespace sim::control
