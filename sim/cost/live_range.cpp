#include "sim/cost/live_range.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/check.h"

namespace sim::cost {

namespace {

constexpr double kTolerance = 1e-12;  // relative, on 1/R: shares within it of the best rate reach it
constexpr double kBindingTolerance = 1e-9;

// One resource's load per unit of R at share f, over its capacity: u(f) = c + m f.
struct Line {
  const char* key;
  double c, m;
};

Line line(const char* key, double a, double b, double capacity) {
  return Line{key, a / capacity, b / capacity};
}

double value(const Line& l, double f) {
  return l.c + l.m * f;
}

double max_value(const std::vector<Line>& lines, double f) {
  double v = 0;
  for (const Line& l : lines) v = std::max(v, value(l, f));
  return v;
}

bool valid_side(const SideBandwidths& s) {
  return positive_finite(s.cnic_read_Bps) && positive_finite(s.cnic_write_Bps) &&
         positive_finite(s.snic_Bps) && positive_finite(s.dram_Bps);
}

}  // namespace

DeShare best_de_share(const SidedInputs& in, double P, double D) {
  SIM_CHECK(in.g_pe >= 1 && in.g_de >= 1 && valid_side(in.pe) && valid_side(in.de),
            "best_de_share: bad inputs (g = {}, {})", in.g_pe, in.g_de);
  SIM_CHECK(positive_finite(P) && positive_finite(D), "best_de_share: P = {}, D = {}", P, D);
  const double gp = in.g_pe, gd = in.g_de;
  const SideBandwidths& pe = in.pe;
  const SideBandwidths& de = in.de;
  const bool hbm = in.de_buffer == config::DeBuffer::kHbm;
  // The loads of the header, per unit of R, in the order of DeShare::binding.
  const std::vector<Line> lines = {
      line("pe_snic", 1, -1, P * pe.snic_Bps),
      line("de_snic", 0, 1, D * de.snic_Bps),
      line("pe_cnic_read", 2, -2, P * gp * pe.cnic_read_Bps),
      line("pe_cnic_write", 1, 0, P * gp * pe.cnic_write_Bps),
      hbm ? line("de_cnic_read", 0, 1, D * gd * de.cnic_read_Bps)
          : line("de_cnic_read", 1, 1, D * gd * de.cnic_read_Bps),
      hbm ? line("de_cnic_write", 1, 0, D * gd * de.cnic_write_Bps)
          : line("de_cnic_write", 2, -1, D * gd * de.cnic_write_Bps),
      line("pe_dram", 2, -2, P * pe.dram_Bps),
      hbm ? line("de_dram", 0, 1, D * de.dram_Bps) : line("de_dram", 2, 1, D * de.dram_Bps)};

  // The convex max of lines is least at an end or where two lines cross.
  double best_f = 0, best_v = max_value(lines, 0);
  auto consider = [&](double f) {
    const double v = max_value(lines, f);
    if (v < best_v) {
      best_v = v;
      best_f = f;
    }
  };
  consider(1);
  for (size_t i = 0; i < lines.size(); ++i)
    for (size_t j = i + 1; j < lines.size(); ++j) {
      const double dm = lines[i].m - lines[j].m;
      if (dm == 0) continue;
      const double f = (lines[j].c - lines[i].c) / dm;
      if (f > 0 && f < 1) consider(f);
    }

  // Every share whose max stays within the tolerance of the best: an interval, by convexity.
  const double cap = best_v * (1 + kTolerance);
  double lo = 0, hi = 1;
  for (const Line& l : lines) {
    if (l.m > 0) hi = std::min(hi, (cap - l.c) / l.m);
    if (l.m < 0) lo = std::max(lo, (cap - l.c) / l.m);
  }
  if (!(lo <= hi)) lo = hi = best_f;  // rounding only

  DeShare s;
  s.proportional = D * de.snic_Bps / (P * pe.snic_Bps + D * de.snic_Bps);
  s.lo = lo;
  s.hi = hi;
  s.de_share = std::clamp(s.proportional, lo, hi);
  const double v = max_value(lines, s.de_share);
  s.rate_Bps = 1 / v;
  for (const Line& l : lines)
    if (value(l, s.de_share) >= v * (1 - kBindingTolerance)) s.binding.push_back(l.key);
  return s;
}

LivePoint live_point(const SidedInputs& in, double P, double D) {
  LivePoint lp;
  lp.p = P;
  lp.d = D;
  auto r = bottleneck_range(in);
  if (!r) return lp;
  lp.range = std::move(*r);
  if (!positive_finite(P) || !positive_finite(D)) return lp;
  lp.inside = pd_inside(lp.range, P, D);
  lp.valid = true;
  lp.share = best_de_share(in, P, D);
  return lp;
}

}  // namespace sim::cost
