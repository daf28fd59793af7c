// Helpers for SimGrid tests: one engine + platform per TEST_CASE (SimGrid cannot be reset in a process).
#pragma once

#include <functional>
#include <map>
#include <simgrid/s4u.hpp>
#include <string>

#include "sim/config/hardware.h"
#include "sim/engine/sg_compat.h"
#include "sim/metrics/link_stats.h"
#include "sim/platform/builder.h"
#include "sim/transport/transport.h"

namespace sim::testing {

inline simgrid::s4u::Engine& make_engine() {
  static int argc = 1;
  static char name[] = "sg_test";
  static char* argv[] = {name, nullptr};
  static simgrid::s4u::Engine e(&argc, argv);
  return e;
}

// A 1P1D platform of one GPU per node, the default hardware otherwise (CNIC 50 GB/s per direction); `qos`:
// network.qos = priority. REQUIRES: make_engine() first.
inline platform::PlatformHandles one_gpu_1p1d(bool qos = false) {
  config::HardwareSpec hw;
  hw.gpus_per_node = 1;
  return platform::build_platform(hw, 1, 1, qos);
}

// A transport on a built platform, metered: send with `t`, read the bytes from `ls`.
struct Metered {
  Metered(const platform::PlatformHandles& h, double window_s, double series_interval_s)
      : t(h), ls(t, window_s, series_interval_s) {}
  transport::Transport t;
  metrics::LinkStats ls;
};

// Bytes carried by each accounted link direction, keyed "n0.g1.cnic/read", "n0.dram/shared", ...
inline std::map<std::string, double> link_bytes(const metrics::LinkStats& ls) {
  const platform::PlatformHandles& h = ls.handles();
  std::map<std::string, double> m;
  for (size_t i = 0; i < h.links.size(); ++i) {
    const auto& t = h.links[i];
    std::string base = t.link->get_name();
    auto us = base.rfind('_');
    if (us != std::string::npos && (base.substr(us) == "_UP" || base.substr(us) == "_DOWN"))
      base = base.substr(0, us);
    m[base + "/" + t.direction] = ls.results()[i].bytes;
  }
  return m;
}

}  // namespace sim::testing
