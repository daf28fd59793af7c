#include "sim/platform/builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <simgrid/s4u.hpp>

#include "sim/storage/read_rate.h"

namespace sim::platform {

namespace sg4 = simgrid::s4u;
using Dir = sg4::LinkInRoute::Direction;

namespace {

// Creates a split-duplex link and records both directions for accounting.
sg4::SplitDuplexLink* duplex(sg4::NetZone* zone, PlatformHandles& h, const std::string& name, double bw,
                             double latency, ResourceClass resource, const char* up_name,
                             const char* down_name, int node, int gpu) {
  auto* l = zone->create_split_duplex_link(name, bw);
  l->set_latency(latency)->seal();
  h.links.push_back({l->get_link_up(), resource, up_name, node, gpu, bw});
  h.links.push_back({l->get_link_down(), resource, down_name, node, gpu, bw});
  return l;
}

// The route down to a host: `up` backwards, each split-duplex link in its other direction.
std::vector<sg4::LinkInRoute> reversed(const std::vector<sg4::LinkInRoute>& up) {
  std::vector<sg4::LinkInRoute> down;
  for (auto it = up.rbegin(); it != up.rend(); ++it) {
    const Dir d = it->get_direction();
    down.emplace_back(it->get_link(), d == Dir::UP ? Dir::DOWN : d == Dir::DOWN ? Dir::UP : d);
  }
  return down;
}

// Class weights through SimGrid's own max-min solver. CM02 gives each flow a sharing penalty equal to its
// route's latency, and the solver divides a flow's share by it (a weighted max-min). A QoS tag is a link
// of unbounded bandwidth whose latency is the class's penalty: every route crosses one tag, its source's
// (a host's route up starts with its tag, its route down has none), so a KV flow and a collective flow on
// one link share it as the classes' weights, and a flow alone still takes the whole link. A tag is still
// a constraint of every max-min solve its flows are in: one per flow, not two. The price is the tag's
// latency before a flow's first byte: 2 x kTagUnitS x (largest weight / the class's weight), 20 ns for the
// collectives and about 2 us for KV at 99:1. kTagUnitS stays 10x above SimGrid's time precision (1e-9 s).
constexpr double kTagUnitS = 1e-8;
constexpr double kTagBandwidthBps = 1e18;

class QosTags {
 public:
  QosTags(const config::HardwareSpec& hw, bool on)
      : on_(on),
        kv_s_(2 * kTagUnitS * std::max(hw.qos_weight_kv, hw.qos_weight_collective) / hw.qos_weight_kv),
        collective_s_(2 * kTagUnitS * std::max(hw.qos_weight_kv, hw.qos_weight_collective) /
                      hw.qos_weight_collective) {}
  bool on() const { return on_; }
  // The host's routes up (`up`) and down (`up` reversed); under QoS the route up starts with the host's
  // tag of its class.
  void route(sg4::NetZone* zone, PlatformHandles& h, sg4::Host* host, const std::vector<sg4::LinkInRoute>& up,
             bool collective) const {
    if (!on_) {
      zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, up, true);
      return;
    }
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    tagged(zone, h, host->get_name(), up, collective), false);
    zone->add_route(nullptr, host->get_netpoint(), nullptr, nullptr, reversed(up), false);
  }
  // A host's route to itself, `links`, with a tag of its class in front under QoS.
  void loopback(sg4::NetZone* zone, PlatformHandles& h, sg4::Host* host, const std::string& tag_name,
                const std::vector<sg4::LinkInRoute>& links, bool collective) const {
    zone->add_route(host->get_netpoint(), host->get_netpoint(), nullptr, nullptr,
                    on_ ? tagged(zone, h, tag_name, links, collective) : links, false);
  }

 private:
  std::vector<sg4::LinkInRoute> tagged(sg4::NetZone* zone, PlatformHandles& h, const std::string& name,
                                       std::vector<sg4::LinkInRoute> links, bool collective) const {
    auto* tag = zone->create_link(name + ".qos", kTagBandwidthBps);
    tag->set_latency(collective ? collective_s_ : kv_s_)->seal();
    h.qos_tags.push_back(tag);
    links.insert(links.begin(), sg4::LinkInRoute(tag));
    return links;
  }

  bool on_;
  double kv_s_, collective_s_;
};

}  // namespace

PlatformHandles build_platform(const config::HardwareSpec& prefill_hw, const config::HardwareSpec& decode_hw,
                               int prefill_nodes, int decode_nodes, bool class_weights,
                               const StorageClient& storage, const std::vector<int>& paced) {
  const config::EngineSpec line_rate_client;
  const config::EngineSpec& client = storage.engine != nullptr ? *storage.engine : line_rate_client;
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e18");  // no window cap on RDMA-like flows
  // GPU executions: SimGrid's trace-integration CPU model, made for single-core hosts whose speed may follow
  // a profile: the same times as the default lazy model, about 6% faster here. (In SimGrid 3.32 it
  // mis-times an execution that is suspended and resumed: dpsim suspends none.)
  sg4::Engine::set_config("cpu/optim:TI");

  PlatformHandles h;
  h.prefill_nodes = prefill_nodes;
  h.decode_nodes = decode_nodes;
  const QosTags qos(prefill_hw, class_weights);
  auto* zone = sg4::create_star_zone("cluster");

  for (int n = 0; n < prefill_nodes + decode_nodes; ++n) {
    NodeHandles node;
    node.role = n < prefill_nodes ? NodeRole::kPrefill : NodeRole::kDecode;
    const config::HardwareSpec& hw = node.role == NodeRole::kPrefill ? prefill_hw : decode_hw;
    const double lat = hw.link_latency_s;
    const std::string p = fmt::format("n{}", n);

    auto* dram = zone->create_link(p + ".dram", hw.dram_bw_Bps);
    dram->set_latency(lat)->seal();
    h.links.push_back({dram, ResourceClass::kDram, "shared", n, -1, hw.dram_bw_Bps});
    auto* snic = duplex(zone, h, p + ".snic", hw.snic_bw_Bps, lat, ResourceClass::kSnic, "in", "out", n, -1);

    node.dram = zone->create_host(p + ".dram", 1.0)->seal();
    qos.route(zone, h, node.dram, {sg4::LinkInRoute(dram)}, false);
    node.storage = zone->create_host(p + ".storage", 1.0)->seal();
    std::vector<sg4::LinkInRoute> storage_up;
    // The storage backend behind the SNIC (storage/read_rate.h). Per node, so no link is crossed by every
    // flow.
    const double backend_bw = storage::backend_Bps(hw, client, storage.block_bytes);
    if (backend_bw > 0) {
      auto* backend =
          duplex(zone, h, p + ".storage", backend_bw, 0, ResourceClass::kStorage, "read", "write", n, -1);
      storage_up.emplace_back(backend, Dir::UP);
    }
    storage_up.emplace_back(snic, Dir::UP);
    qos.route(zone, h, node.storage, storage_up, false);

    std::vector<sg4::LinkInRoute> node_out, node_in;  // every GPU's links to its CNIC, out and back in
    for (int j = 0; j < hw.gpus_per_node; ++j) {
      const std::string q = fmt::format("{}.g{}", p, j);
      auto* cnic =
          duplex(zone, h, q + ".cnic", hw.cnic_bw_Bps, lat, ResourceClass::kCnic, "read", "write", n, j);
      auto* gpu = zone->create_host(q, hw.gpu_flops)->seal();
      auto* buf = zone->create_host(q + ".buf", 1.0)->seal();
      std::vector<sg4::LinkInRoute> gpu_up, buf_up;
      if (hw.pcie_bw_Bps > 0) {
        auto* pg = duplex(zone, h, q + ".pcie_gpu", hw.pcie_bw_Bps, lat, ResourceClass::kPcie, "from_gpu",
                          "to_gpu", n, j);
        auto* ph = duplex(zone, h, q + ".pcie_host", hw.pcie_bw_Bps, lat, ResourceClass::kPcie, "from_host",
                          "to_host", n, j);
        gpu_up.emplace_back(pg, Dir::UP);
        buf_up.emplace_back(dram);
        buf_up.emplace_back(ph, Dir::UP);
      } else {
        buf_up.emplace_back(dram);
      }
      gpu_up.emplace_back(cnic, Dir::UP);
      buf_up.emplace_back(cnic, Dir::UP);
      qos.route(zone, h, gpu, gpu_up, false);
      qos.route(zone, h, buf, buf_up, false);
      if (node.role == NodeRole::kDecode) {
        // The storage side as GPU j's HBM reaches it (cluster.de_buffer = hbm): a read from it to the GPU
        // crosses the storage backend and the SNIC, the node's DRAM once (the read's bounce buffer), then
        // switch j's host PCIe link and the CNIC's write direction into the GPU; no CNIC read.
        std::vector<sg4::LinkInRoute> store_up = storage_up;
        store_up.emplace_back(dram);
        if (hw.pcie_bw_Bps > 0) store_up.push_back(buf_up[1]);  // switch j's host PCIe link, up
        auto* store = zone->create_host(q + ".store", 1.0)->seal();
        qos.route(zone, h, store, store_up, false);
        node.stores.push_back(store);
      }
      // The GPU's EP exchange (a collective from the GPU to itself): out through its CNIC and back in, as a
      // balanced all-to-all loads every CNIC of the group with as many bytes each way (transport.h).
      std::vector<sg4::LinkInRoute> loop = gpu_up;
      for (auto it = gpu_up.rbegin(); it != gpu_up.rend(); ++it) loop.emplace_back(it->get_link(), Dir::DOWN);
      if (qos.on()) {  // the GPU's collective endpoint: the GPU's links, the collectives' tag
        auto* ep = zone->create_host(q + ".ep", 1.0)->seal();
        qos.route(zone, h, ep, gpu_up, true);
        qos.loopback(zone, h, ep, q + ".ep.loop", loop, true);
        node.eps.push_back(ep);
      } else {
        zone->add_route(gpu->get_netpoint(), gpu->get_netpoint(), nullptr, nullptr, loop, false);
      }
      node_out.insert(node_out.end(), gpu_up.begin(), gpu_up.end());
      for (auto it = gpu_up.rbegin(); it != gpu_up.rend(); ++it)
        node_in.emplace_back(it->get_link(), Dir::DOWN);
      node.gpus.push_back(gpu);
      node.bufs.push_back(buf);
    }
    // The node's part of an EP exchange that covers whole nodes: one flow through every GPU's CNIC, out and
    // back in, whose rate is the pace of each of its GPUs' exchange (a prefill pass's, a decode group's
    // steps'). On a decode node a link of its own in front of the route paces it (not a resource: not
    // accounted), set by the decode group at each plan (engine/decode_service.h).
    node.exchange = zone->create_host(p + ".ex", 1.0)->seal();
    if (node.role == NodeRole::kDecode || std::find(paced.begin(), paced.end(), n) != paced.end()) {
      node.exchange_pace = zone->create_link(p + ".ex.pace", hw.cnic_bw_Bps);
      node.exchange_pace->set_latency(0)->seal();
      node_out.insert(node_out.begin(), sg4::LinkInRoute(node.exchange_pace));
    }
    node_out.insert(node_out.end(), node_in.begin(), node_in.end());
    qos.loopback(zone, h, node.exchange, p + ".ex.loop", node_out, true);
    h.nodes.push_back(std::move(node));
  }
  h.control = zone->create_host("control", 1.0)->seal();
  zone->seal();
  return h;
}

}  // namespace sim::platform
