#include "sim/platform/builder.h"

#include <fmt/format.h>

#include <simgrid/s4u.hpp>

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

void route(sg4::NetZone* zone, sg4::Host* host, const std::vector<sg4::LinkInRoute>& up) {
  zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, up, true);
}

}  // namespace

PlatformHandles build_platform(const config::HardwareSpec& hw, int prefill_nodes, int decode_nodes) {
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
  h.gpus_per_node = hw.gpus_per_node;
  const double lat = hw.link_latency_s;
  auto* zone = sg4::create_star_zone("cluster");

  for (int n = 0; n < prefill_nodes + decode_nodes; ++n) {
    NodeHandles node;
    node.role = n < prefill_nodes ? NodeRole::kPrefill : NodeRole::kDecode;
    const std::string p = fmt::format("n{}", n);

    auto* dram = zone->create_link(p + ".dram", hw.dram_bw_Bps);
    dram->set_latency(lat)->seal();
    h.links.push_back({dram, ResourceClass::kDram, "shared", n, -1, hw.dram_bw_Bps});
    auto* snic = duplex(zone, h, p + ".snic", hw.snic_bw_Bps, lat, ResourceClass::kSnic, "in", "out", n, -1);

    node.dram = zone->create_host(p + ".dram", 1.0)->seal();
    route(zone, node.dram, {sg4::LinkInRoute(dram)});
    node.storage = zone->create_host(p + ".storage", 1.0)->seal();
    std::vector<sg4::LinkInRoute> storage_up;
    // The storage backend behind the SNIC: an explicit per-node bandwidth, or the SNIC rate scaled by the
    // storage efficiency. Per node, so no link is crossed by every flow.
    const double backend_bw = hw.storage_bw_per_node_Bps > 0 ? hw.storage_bw_per_node_Bps
                              : hw.storage_efficiency < 1    ? hw.storage_efficiency * hw.snic_bw_Bps
                                                             : 0;
    if (backend_bw > 0) {
      auto* backend =
          duplex(zone, h, p + ".storage", backend_bw, 0, ResourceClass::kStorage, "read", "write", n, -1);
      storage_up.emplace_back(backend, Dir::UP);
    }
    storage_up.emplace_back(snic, Dir::UP);
    route(zone, node.storage, storage_up);

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
      route(zone, gpu, gpu_up);
      route(zone, buf, buf_up);
      node.gpus.push_back(gpu);
      node.bufs.push_back(buf);
    }
    h.nodes.push_back(std::move(node));
  }
  h.control = zone->create_host("control", 1.0)->seal();
  zone->seal();
  return h;
}

}  // namespace sim::platform
