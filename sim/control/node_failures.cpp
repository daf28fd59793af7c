#include "sim/control/node_failures.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/control/driver.h"
#include "sim/engine/decode_service.h"
#include "sim/engine/dispatcher.h"
#include "sim/engine/prefill_service.h"
#include "sim/engine/reader_service.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/timeline.h"

namespace sim::control {

using platform::NodeRole;

NodeFailures::NodeFailures(engine::EngineContext& c, engine::ReaderService& reader,
                           engine::PrefillService& prefill, engine::DecodeService& decode,
                           engine::Dispatcher& dispatcher, Driver& driver)
    : c_(c), reader_(reader), prefill_(prefill), decode_(decode), dispatcher_(dispatcher), driver_(driver) {
  for (size_t i = 0; i < c.sc.events.size(); ++i) {
    const auto& e = c.sc.events[i];
    if (e.kind != "node_down" && e.kind != "node_up") continue;
    Act a;
    a.event = i;
    a.at_s = e.at_s;
    a.down = e.kind == "node_down";
    a.nodes = e.nodes;
    acts_.push_back(a);
  }
  // In time order; at one instant, in the file's order.
  std::stable_sort(acts_.begin(), acts_.end(), [](const Act& a, const Act& b) { return a.at_s < b.at_s; });
  if (!acts_.empty()) c.rec.bytes_reread.assign(c.sc.events.size(), 0.0);
}

void NodeFailures::start() {
  if (acts_.empty()) return;
  engine::spawn_daemon("node-failures", c_.h.control, [this]() { play(); });
}

void NodeFailures::play() {
  for (Act& a : acts_) {
    if (a.at_s > engine::now()) engine::sleep_for(a.at_s - engine::now());
    if (c_.run.finished()) return;
    a.acted_at_s = engine::now();
    if (a.down) {
      fail(a);
    } else {
      recover(a);
    }
    if (on_live_change_) on_live_change_();
    if (on_change_) on_change_(a.down ? "node_down" : "node_up");
  }
}

void NodeFailures::node_links(int node, std::vector<int>& links,
                              std::vector<simgrid::s4u::Link*>& others) const {
  for (size_t i = 0; i < c_.h.links.size(); ++i)
    if (c_.h.links[i].node == node) links.push_back(static_cast<int>(i));
  if (c_.h.nodes[node].exchange_pace != nullptr) others.push_back(c_.h.nodes[node].exchange_pace);
}

void NodeFailures::let_go(engine::RequestId id, Act& a) {
  engine::Request& r = c_.requests[id];
  // Where it was when it was lost.
  if (r.t_first >= 0) {
    a.lost_decode++;
  } else if (r.t_ready >= 0) {
    a.lost_prefill++;
  } else {
    a.lost_reading++;
  }
  reader_.forget(id);
  prefill_.forget(id);
  dispatcher_.forget(id);
  decode_.forget(id);
  // Its loads, and the bytes it moved: counted as lost, not as the workload's.
  if (r.pe_placed && r.t_first < 0) c_.loads.discharge_pe(r.pe, r);
  if (r.de_placed) c_.loads.discharge_de(r.de, r);
  c_.rec.hit_bytes_read -= r.read_bytes;
  c_.rec.lost_bytes_read += r.read_bytes;
  a.bytes_read_lost += r.read_bytes;
  if (r.hit_pushed) {
    const double hit = engine::wire_bytes(r, r.hit * c_.kv_token);
    c_.rec.hit_bytes_loaded -= hit;
    c_.rec.lost_bytes_loaded += hit;
    a.bytes_loaded_lost += hit;
  }
}

void NodeFailures::fail(Act& a) {
  // 1. State, with no simcall: the nodes are down, and every request they lose is marked and leaves the
  //    queues and loads, so that whatever runs from the first simcall on sees none of it.
  for (int n : a.nodes) c_.members.fail(n);
  auto on = [&](int n) { return std::find(a.nodes.begin(), a.nodes.end(), n) != a.nodes.end(); };
  std::vector<engine::RequestId> lost;
  for (engine::RequestId id : c_.requests.in_flight_ids()) {
    const engine::Request& r = c_.requests[id];
    const bool de = r.de_placed && on(c_.loads.de_node(r.de));
    const bool pe = r.pe_placed && r.t_first < 0 && on(c_.loads.pe_node(r.pe));
    if (de || pe) lost.push_back(id);
  }
  for (engine::RequestId id : lost) c_.requests[id].lost = true;
  for (engine::RequestId id : lost) let_go(id, a);
  for (int n : a.nodes) a.persist_bytes_lost += decode_.node_down(n);
  c_.rec.persist_bytes_lost += a.persist_bytes_lost;
  // 2. The links go down: the transfers crossing them fail (their actors find their requests lost).
  std::vector<int> links;
  std::vector<simgrid::s4u::Link*> others;
  for (int n : a.nodes) node_links(n, links, others);
  c_.transport.cut(links, others);
  // 3. What the lost requests held on the nodes that are up is free (these wake the waiters), and the
  //    engine groups follow the live GPUs.
  for (engine::RequestId id : lost) {
    engine::Request& r = c_.requests[id];
    if (r.pe_placed) c_.buffers.release(r, c_.loads.pe_node(r.pe), true);
    if (r.de_placed) {
      c_.buffers.release(r, c_.loads.de_node(r.de), false);
      c_.hbm.release(r, r.de);
    }
  }
  prefill_.resize();
  decode_.resize();
  // 4. Their turns run again, on the nodes that are up.
  for (engine::RequestId id : lost) {
    driver_.restart(id, static_cast<int>(a.event));
    c_.requests.retire(id);
  }
  prefill_.wake_all();  // the pass groups re-read their members
  decode_.wake_all();
  c_.buffers.wake_all();
  dispatcher_.joined();
}

void NodeFailures::recover(Act& a) {
  std::vector<int> links;
  std::vector<simgrid::s4u::Link*> others;
  for (int n : a.nodes) node_links(n, links, others);
  c_.transport.restore(links, others);
  for (int n : a.nodes) c_.members.recover(n);
  prefill_.resize();
  decode_.resize();
  prefill_.wake_all();  // the pass groups re-read their members
  decode_.wake_all();
  dispatcher_.joined();
}

nlohmann::json NodeFailures::to_json(size_t event) const {
  for (const Act& a : acts_) {
    if (a.event != event) continue;
    const auto& e = c_.sc.events[event];
    nlohmann::json j = {{"kind", e.kind},
                        {"at_s", e.at_s},
                        {"nodes", e.nodes},
                        {"acted_at_s", a.acted_at_s < 0 ? nlohmann::json() : nlohmann::json(a.acted_at_s)}};
    if (!a.down) return j;
    j["requests_restarted"] = a.lost();
    j["lost_in"] = {{"reading", a.lost_reading}, {"prefill", a.lost_prefill}, {"decode", a.lost_decode}};
    j["storage_bytes_read_before"] = a.bytes_read_lost;
    j["hit_bytes_loaded_before"] = a.bytes_loaded_lost;
    j["storage_bytes_reread"] = c_.rec.bytes_reread.empty() ? 0.0 : c_.rec.bytes_reread[event];
    j["persist_bytes_lost"] = a.persist_bytes_lost;
    return j;
  }
  return nlohmann::json::object();
}

nlohmann::json NodeFailures::summary_json() const {
  int downs = 0, restarted = 0;
  double reread = 0;
  for (const Act& a : acts_) {
    if (!a.down || a.acted_at_s < 0) continue;
    downs++;
    restarted += a.lost();
  }
  for (double b : c_.rec.bytes_reread) reread += b;
  return {{"node_downs", downs},
          {"requests_restarted", restarted},
          {"storage_bytes_lost", c_.rec.lost_bytes_read},
          {"storage_bytes_reread", reread},
          {"hit_bytes_loaded_lost", c_.rec.lost_bytes_loaded},
          {"prefill_passes_failed", c_.rec.passes_failed},
          {"persist_bytes_lost", c_.rec.persist_bytes_lost}};
}

void NodeFailures::mark(metrics::Timeline& timeline, double end_s) const {
  for (const Act& a : acts_) {
    if (!a.down || a.acted_at_s < 0) continue;
    for (int n : a.nodes) {
      double up = end_s;  // the first node_up of the node after this failure
      for (const Act& b : acts_)
        if (!b.down && b.acted_at_s >= a.acted_at_s &&
            std::find(b.nodes.begin(), b.nodes.end(), n) != b.nodes.end()) {
          up = b.acted_at_s;
          break;
        }
      timeline.scenario_event(fmt::format("node_down n{}", n), a.acted_at_s, up, 0);
    }
  }
}

}  // namespace sim::control
