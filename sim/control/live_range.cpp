#include "sim/control/live_range.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <simgrid/s4u/Link.hpp>

#include "sim/core/check.h"

namespace sim::control {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

nlohmann::json number_or_null(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}

nlohmann::json side_json(const cost::SideBandwidths& s) {
  return {{"cnic_read_Bps", s.cnic_read_Bps},
          {"cnic_write_Bps", s.cnic_write_Bps},
          {"snic_Bps", s.snic_Bps},
          {"dram_Bps", s.dram_Bps}};
}

}  // namespace

LiveRange::LiveRange(const platform::PlatformHandles& h, const std::vector<platform::NodeRole>& roles,
                     config::DeBuffer de_buffer)
    : h_(h), roles_(roles), de_buffer_(de_buffer) {
  update(0, "start");
}

cost::SidedInputs LiveRange::measure(double* P, double* D) const {
  SIM_CHECK(roles_.size() == h_.nodes.size(), "LiveRange: {} roles for {} nodes", roles_.size(),
            h_.nodes.size());
  struct Acc {
    double snic_sum = 0;
    int snics = 0;
    int g = 0;
    cost::SideBandwidths min{kInf, kInf, kInf, kInf};
  } acc[2];  // prefill, decode
  for (int n = 0; n < static_cast<int>(h_.nodes.size()); ++n) {
    if (excluded(n)) continue;
    Acc& a = acc[roles_[n] == platform::NodeRole::kPrefill ? 0 : 1];
    a.g = a.g == 0 ? h_.gpus_on(n) : std::min(a.g, h_.gpus_on(n));
  }
  for (const platform::TrackedLink& l : h_.links) {
    if (excluded(l.node)) continue;  // a draining or down node: on neither side
    Acc& a = acc[roles_[l.node] == platform::NodeRole::kPrefill ? 0 : 1];
    const double bw = l.link->get_bandwidth();
    if (l.resource == platform::ResourceClass::kSnic && l.direction == "in") {
      a.snic_sum += bw;
      a.snics++;
    } else if (l.resource == platform::ResourceClass::kCnic && l.direction == "read") {
      a.min.cnic_read_Bps = std::min(a.min.cnic_read_Bps, bw);
    } else if (l.resource == platform::ResourceClass::kCnic && l.direction == "write") {
      a.min.cnic_write_Bps = std::min(a.min.cnic_write_Bps, bw);
    } else if (l.resource == platform::ResourceClass::kDram) {
      a.min.dram_Bps = std::min(a.min.dram_Bps, bw);
    }
  }
  cost::SideBandwidths side[2];
  for (int k = 0; k < 2; ++k) {
    side[k] = acc[k].min;
    side[k].snic_Bps = acc[k].snics > 0 ? acc[k].snic_sum / acc[k].snics : kInf;
  }
  *P = static_cast<double>(acc[0].snics);
  *D = static_cast<double>(acc[1].snics);
  int g[2] = {acc[0].g, acc[1].g};
  if (acc[0].snics == 0) side[0] = side[1], g[0] = g[1];
  if (acc[1].snics == 0) side[1] = side[0], g[1] = g[0];
  return cost::SidedInputs{g[0], g[1], side[0], side[1], de_buffer_};
}

void LiveRange::update(double now, const char* why) {
  double P = 0, D = 0;
  const cost::SidedInputs in = measure(&P, &D);
  current_ = cost::live_point(in, P, D);
  const cost::LivePoint& c = current_;
  nlohmann::json e = {{"t_s", now},
                      {"why", why},
                      {"P", P},
                      {"D", D},
                      {"pd", D > 0 ? nlohmann::json(P / D) : nlohmann::json()},
                      {"pd_min", number_or_null(c.range.pd_min)},
                      {"pd_max", number_or_null(c.range.pd_max)},
                      {"feasible", c.range.feasible},
                      {"inside", c.inside},
                      {"bandwidths", {{"prefill", side_json(in.pe)}, {"decode", side_json(in.de)}}}};
  if (c.valid) {
    e["binding"] = c.share.binding;
    e["de_share"] = c.share.de_share;
    e["de_share_lo"] = c.share.lo;
    e["de_share_hi"] = c.share.hi;
    e["rate_Bps"] = c.share.rate_Bps;
  } else {
    e["binding"] = nlohmann::json::array();
    for (const char* k : {"de_share", "de_share_lo", "de_share_hi", "rate_Bps"}) e[k] = nullptr;
  }
  // The bounds the live P/D breaks: the lower one's resource below the range, the upper ones' above.
  nlohmann::json violated = nlohmann::json::array();
  if (c.valid && c.range.feasible && !c.inside) {
    const double pd = P / D;
    for (const cost::BoundTerm& t : c.range.terms)
      if ((t.kind == cost::TermKind::kLower && pd < t.value) ||
          (t.kind == cost::TermKind::kUpper && pd > t.value))
        violated.push_back(t.key);
  }
  e["violated"] = violated;
  series_.push_back(std::move(e));
}

}  // namespace sim::control
