// The per-side bottleneck analysis and the best DE-path share (sim/cost/live_range.h): hand-computed
// asymmetric cases, the homogeneous case against the formulas of bottleneck.h bit for bit, and f* inside,
// below and above the range.
#include "sim/cost/live_range.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/unit/cost/range_terms.h"

namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using sim::config::DeBuffer;
using sim::cost::BottleneckInputs;
using sim::cost::BottleneckRange;
using sim::cost::SidedInputs;

using test_support::kB;  // 400 Gbps
constexpr double kM = 500e9;

using test_support::term;

// The paper's node with the DE SNICs at 25% and the PE CNICs' write direction at 50%.
SidedInputs asymmetric(DeBuffer b = DeBuffer::kDram) {
  SidedInputs in = sim::cost::sided(BottleneckInputs{8, kB, kB, kM, b});
  in.de.snic_Bps = 0.25 * kB;
  in.pe.cnic_write_Bps = 0.5 * kB;
  return in;
}

BottleneckRange sided_range_of(const SidedInputs& in) {
  auto r = sim::cost::bottleneck_range(in);
  REQUIRE(r.is_ok());
  return *r;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("Live range: equal sides -> the homogeneous formulas, bit for bit", "[unit]") {
  for (DeBuffer b : {DeBuffer::kDram, DeBuffer::kHbm})
    for (int g : {1, 4, 8})
      for (double sB : {12.5e9, 50e9, 150e9})
        for (double M : {100e9, 500e9}) {
          const BottleneckInputs in{g, kB, sB, M, b};
          const BottleneckRange h = *sim::cost::bottleneck_range(in);
          const BottleneckRange s = sided_range_of(sim::cost::sided(in));
          const double s_ = sB / kB, m = M / sB;
          const double gg = g;
          INFO("g=" << g << " sB=" << sB << " M=" << M);
          CHECK(s.pd_min == (gg > s_ ? s_ / (gg - s_) : h.pd_min));
          if (b == DeBuffer::kHbm) {
            CHECK(s.pd_max == (gg - s_) / s_);
          } else {
            CHECK(term(s, "de_cnic_read").value == (gg - 2 * s_) / s_);
            CHECK(term(s, "de_cnic_write").value == (gg - s_) / (2 * s_));
            CHECK(term(s, "de_dram").value == (m - 3) / 2);
          }
          CHECK(term(s, "pe_cnic_read").value == 2 * s_ / gg);
          CHECK(term(s, "pe_dram").value == 2 / m);
          CHECK(s.pd_max == h.pd_max);
          CHECK(s.feasible == h.feasible);
          CHECK(s.reason == h.reason);
          CHECK(sim::cost::to_json(s).dump() == sim::cost::to_json(h).dump());
        }
}

TEST_CASE("Live range: DE SNIC at 25%, PE CNIC write at 50% -> each load against its own side", "[unit]") {
  const BottleneckRange r = sided_range_of(asymmetric());
  // (2)-(3): sB_de/(g B_pw - sB_pe) = 12.5/(200 - 50); (4)-(5): (g B_dr - 2 sB_de)/sB_pe = (400 - 25)/50;
  // (6)-(7): (g B_dw - sB_de)/(2 sB_pe) = (400 - 12.5)/100; (8): (M_de - 3 sB_de)/(2 sB_pe) = (500
  // - 37.5)/100.
  CHECK_THAT(r.pd_min, WithinRel(1.0 / 12, 1e-12));
  CHECK_THAT(term(r, "de_cnic_read").value, WithinRel(7.5, 1e-12));
  CHECK_THAT(term(r, "de_cnic_write").value, WithinRel(3.875, 1e-12));
  CHECK_THAT(term(r, "de_dram").value, WithinRel(4.625, 1e-12));
  CHECK_THAT(r.pd_max, WithinRel(3.875, 1e-12));
  CHECK(term(r, "de_cnic_write").binding);
  CHECK_FALSE(term(r, "de_dram").binding);
  CHECK(r.feasible);
  // One shared s (the PE side's SNIC over its CNIC write, s = 2, as the homogeneous analysis would take
  // it) gives another range: 2/(8 - 2) = 1/3 <= P/D <= (8 - 2)/4 = 3/2.
  const BottleneckRange shared = *sim::cost::bottleneck_range(BottleneckInputs{8, 0.5 * kB, kB, kM});
  CHECK_FALSE(shared.pd_min == Approx(r.pd_min));
  CHECK_FALSE(shared.pd_max == Approx(r.pd_max));
  // With the DE buffer in HBM: (H4) (g B_dw - sB_de)/sB_pe = 387.5/50.
  const BottleneckRange hbm = sided_range_of(asymmetric(DeBuffer::kHbm));
  CHECK_THAT(hbm.pd_min, WithinRel(1.0 / 12, 1e-12));
  CHECK_THAT(hbm.pd_max, WithinRel(7.75, 1e-12));
  // A bandwidth that is not positive is named.
  SidedInputs bad = asymmetric();
  bad.de.cnic_write_Bps = 0;
  auto e = sim::cost::bottleneck_range(bad);
  REQUIRE_FALSE(e.is_ok());
  CHECK(e.status().message().find("de.cnic_write_Bps") != std::string::npos);
}

TEST_CASE(
    "Live range: inside the range -> the best share is D sB_de / (P sB_pe + D sB_de), every SNIC saturated",
    "[unit]") {
  const auto lp = sim::cost::live_point(asymmetric(), 1, 1);
  REQUIRE(lp.valid);
  CHECK(lp.inside);
  CHECK_THAT(lp.share.de_share, WithinAbs(0.2, 1e-12));  // 12.5/(50 + 12.5)
  CHECK_THAT(lp.share.rate_Bps, WithinRel(62.5e9, 1e-12));
  CHECK(lp.share.binding == Strings{"pe_snic", "de_snic"});
  // The paper's node at 2P4D: 4·50/(2·50 + 4·50).
  const auto paper = sim::cost::live_point(sim::cost::sided(BottleneckInputs{}), 2, 4);
  CHECK(paper.inside);
  CHECK_THAT(paper.share.de_share, WithinAbs(2.0 / 3, 1e-12));
  CHECK_THAT(paper.share.rate_Bps, WithinRel(300e9, 1e-12));
}

TEST_CASE(
    "Live range: below the lower bound -> PE CNIC write binds for every share, the best share in its band",
    "[unit]") {
  // P/D = 1/16 < 1/12. The PE CNIC write caps R at P g B_pw = 200 GB/s for every f; the PE SNIC needs
  // (1 - f) 200 <= 50, f >= 3/4; the DE SNICs f 200 <= 16·12.5. f_prop = 200/250 = 0.8 lies in [3/4, 1].
  const auto lp = sim::cost::live_point(asymmetric(), 1, 16);
  REQUIRE(lp.valid);
  CHECK_FALSE(lp.inside);
  CHECK_THAT(lp.share.rate_Bps, WithinRel(200e9, 1e-9));
  CHECK_THAT(lp.share.lo, WithinAbs(0.75, 1e-9));
  CHECK_THAT(lp.share.hi, WithinAbs(1.0, 1e-9));
  CHECK_THAT(lp.share.de_share, WithinAbs(0.8, 1e-12));
  CHECK(lp.share.binding == Strings{"pe_cnic_write"});
  // With the DE DRAMs at 30 GB/s the DE DRAM's (2 + f) R/16 <= 30 and the PE SNIC's (1 - f) R <= 50 cap R
  // below 200 GB/s for every f: the best R is where the two cross, (1 - f)/50 = (2 + f)/480, so
  // 480 - 480 f = 100 + 50 f, f = 38/53, R = 50/(1 - f) = 50·53/15 GB/s.
  SidedInputs tight = asymmetric();
  tight.de.dram_Bps = 30e9;
  const auto t = sim::cost::best_de_share(tight, 1, 16);
  CHECK_THAT(t.de_share, WithinAbs(38.0 / 53, 1e-9));
  CHECK_THAT(t.rate_Bps, WithinRel(50e9 * 53 / 15, 1e-9));
  CHECK(t.binding == Strings{"pe_snic", "de_dram"});
}

TEST_CASE("Live range: above the upper bound -> DE CNIC write favours the DE path, DE DRAM the PE path",
          "[unit]") {
  // Asymmetric, P = 8, D = 1 (P/D = 8 > 3.875): the DE CNIC write (2 - f)/400 falls with f, the DE SNIC
  // f/12.5 rises: they cross at 12.5 (2 - f) = 400 f, f = 2/33, R = 12.5·33/2 GB/s; f_prop = 1/33.
  const auto lp = sim::cost::live_point(asymmetric(), 8, 1);
  REQUIRE(lp.valid);
  CHECK_FALSE(lp.inside);
  CHECK_THAT(lp.share.de_share, WithinAbs(2.0 / 33, 1e-9));
  CHECK_THAT(lp.share.proportional, WithinAbs(1.0 / 33, 1e-12));
  CHECK_THAT(lp.share.rate_Bps, WithinRel(206.25e9, 1e-9));
  CHECK(lp.share.binding == Strings{"de_snic", "de_cnic_write"});
  // The paper's node at 8P1D: (2 - f)/400 = f/50 at f = 2/9, where the DE DRAM (2 + f)/500 ties too.
  const auto paper = sim::cost::best_de_share(sim::cost::sided(BottleneckInputs{}), 8, 1);
  CHECK_THAT(paper.de_share, WithinAbs(2.0 / 9, 1e-9));
  CHECK_THAT(paper.rate_Bps, WithinRel(225e9, 1e-9));
  CHECK(paper.binding == Strings{"de_snic", "de_cnic_write", "de_dram"});
  // A DE DRAM of 300 GB/s: (2 + f)/300 exceeds every other load at f = 0 and rises with f: all PE path.
  SidedInputs slow_dram = sim::cost::sided(BottleneckInputs{});
  slow_dram.de.dram_Bps = 300e9;
  const auto d = sim::cost::best_de_share(slow_dram, 8, 1);
  CHECK_THAT(d.de_share, WithinAbs(0, 1e-9));
  CHECK_THAT(d.rate_Bps, WithinRel(150e9, 1e-9));
  CHECK(d.binding == Strings{"de_dram"});
  // With the DE buffer in HBM at 8P1D (P/D 8 > 7): the DE CNIC write R/(D g) is the same for every f and
  // caps R at 400 GB/s; the DE SNIC keeps it there while f 400 <= 50, f <= 1/8; f_prop = 50/450 = 1/9.
  const auto h =
      sim::cost::best_de_share(sim::cost::sided(BottleneckInputs{8, kB, kB, kM, DeBuffer::kHbm}), 8, 1);
  CHECK_THAT(h.lo, WithinAbs(0, 1e-9));
  CHECK_THAT(h.hi, WithinAbs(0.125, 1e-9));
  CHECK_THAT(h.de_share, WithinAbs(1.0 / 9, 1e-12));
  CHECK(h.binding == Strings{"de_cnic_write"});
}

TEST_CASE("Live range: one shared s for both sides -> another share, so the per-side model is needed",
          "[unit]") {
  // Seen through one set of bandwidths for both sides (the paper's node), the asymmetric node would get
  // f* = 2/9 at 8P1D and 1/2 at 1P1D; its own sides give 2/33 and 1/5.
  const auto shared = sim::cost::best_de_share(sim::cost::sided(BottleneckInputs{}), 8, 1);
  const auto sides = sim::cost::best_de_share(asymmetric(), 8, 1);
  CHECK_FALSE(shared.de_share == Approx(sides.de_share).margin(1e-3));
  CHECK_THAT(sim::cost::best_de_share(sim::cost::sided(BottleneckInputs{}), 1, 1).de_share,
             WithinAbs(0.5, 1e-12));
  CHECK_THAT(sides.de_share, WithinAbs(2.0 / 33, 1e-9));
  CHECK_THAT(sim::cost::best_de_share(asymmetric(), 1, 1).de_share, WithinAbs(0.2, 1e-12));
  // No node on a side: no point.
  const auto none = sim::cost::live_point(asymmetric(), 0, 2);
  CHECK_FALSE(none.valid);
  CHECK_FALSE(none.inside);
}
