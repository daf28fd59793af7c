// The bottleneck-free range per role (sim/cost/bottleneck.h, "Per role"; sim/README.md): with one file it is
// today's range bit for bit, text and JSON included; with two files it matches hand computations with a
// different g, B, sB and M per role, and its loads at the bounds saturate the binding resource.
#include <catch2/catch.hpp>
#include <string>

#include "sim/config/hardware.h"
#include "sim/cost/bottleneck.h"
#include "sim/cost/live_range.h"
#include "tests/unit/cost/range_terms.h"

namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using sim::config::DeBuffer;
using sim::config::HardwareSpec;
using sim::cost::BottleneckRange;
using sim::cost::LinkLoads;

HardwareSpec node(int g, double B, double sB, double M) {
  HardwareSpec hw;
  hw.gpus_per_node = g;
  hw.cnic_bw_Bps = B;
  hw.snic_bw_Bps = sB;
  hw.dram_bw_Bps = M;
  return hw;
}

BottleneckRange per_role(const HardwareSpec& p, const HardwareSpec& d, DeBuffer b = DeBuffer::kDram) {
  auto r = sim::cost::bottleneck_range(sim::cost::sided_inputs(p, d, b));
  REQUIRE(r.is_ok());
  return *r;
}

using test_support::term;

// The paper's node, and a decode node with half its GPUs, half its SNIC and 300 GB/s of DRAM.
const HardwareSpec kPaper = node(8, 50e9, 50e9, 500e9);
const HardwareSpec kSmall = node(4, 50e9, 25e9, 300e9);

}  // namespace

TEST_CASE("Role range: one file for both roles -> today's range, table and JSON, bit for bit", "[unit]") {
  for (DeBuffer b : {DeBuffer::kDram, DeBuffer::kHbm})
    for (int g : {1, 4, 8})
      for (double sB : {12.5e9, 50e9, 150e9})
        for (double M : {100e9, 500e9}) {
          const HardwareSpec hw = node(g, 50e9, sB, M);
          INFO("g=" << g << " sB=" << sB << " M=" << M << " hbm=" << (b == DeBuffer::kHbm));
          const BottleneckRange one = *sim::cost::bottleneck_range(sim::cost::bottleneck_inputs(hw, b));
          const BottleneckRange two = per_role(hw, hw, b);
          CHECK_FALSE(two.per_role);
          CHECK(two.pd_min == one.pd_min);
          CHECK(two.pd_max == one.pd_max);
          CHECK(two.feasible == one.feasible);
          CHECK(two.reason == one.reason);
          CHECK(sim::cost::to_json(two).dump() == sim::cost::to_json(one).dump());
          CHECK(sim::cost::format_table(two) == sim::cost::format_table(one));
          const LinkLoads a = sim::cost::ideal_link_loads(g, 50e9, sB, M, 3, 5, b);
          const LinkLoads c = sim::cost::ideal_link_loads(two.sides, 3, 5);
          CHECK(sim::cost::to_json(c).dump() == sim::cost::to_json(a).dump());
          CHECK(sim::cost::format_table(two, &c) == sim::cost::format_table(one, &a));
        }
}

TEST_CASE("Role range: 8-GPU prefill nodes, 4-GPU decode nodes -> 1/7 <= P/D <= 3/2 by hand", "[unit]") {
  // Same B, sB, M; only g differs. Lower (2)-(3): sB_d/(g_p B - sB_p) = 50/(400 - 50) = 1/7 (as all-8);
  // uppers: (4)-(5) (4*50 - 2*50)/50 = 2, (6)-(7) (4*50 - 50)/(2*50) = 3/2, (8) (500 - 150)/100 = 7/2.
  // All-8 is 1/7..7/2 and all-4 is 1/3..3/2: the mixed range is neither.
  const BottleneckRange r = per_role(kPaper, node(4, 50e9, 50e9, 500e9));
  CHECK(r.per_role);
  CHECK(r.feasible);
  CHECK_THAT(r.pd_min, WithinRel(1.0 / 7, 1e-12));
  CHECK_THAT(term(r, "de_cnic_read").value, WithinRel(2.0, 1e-12));
  CHECK_THAT(term(r, "de_cnic_write").value, WithinRel(1.5, 1e-12));
  CHECK_THAT(term(r, "de_dram").value, WithinRel(3.5, 1e-12));
  CHECK_THAT(r.pd_max, WithinRel(1.5, 1e-12));
  CHECK(term(r, "de_cnic_write").binding);
  CHECK(sim::cost::simple_fraction(r.pd_max) == "3/2");
  const BottleneckRange all4 = per_role(node(4, 50e9, 50e9, 500e9), node(4, 50e9, 50e9, 500e9));
  CHECK_THAT(all4.pd_min, WithinRel(1.0 / 3, 1e-12));
  CHECK_THAT(all4.pd_max, WithinRel(1.5, 1e-12));
}

TEST_CASE("Role range: every parameter differs by role -> each bound by hand, DRAM buffer and HBM",
          "[unit]") {
  // Prefill g_p = 8, B = 50, sB_p = 50, M_p = 500; decode g_d = 4, B = 50, sB_d = 25, M_d = 300 (GB/s).
  const BottleneckRange r = per_role(kPaper, kSmall);
  CHECK_THAT(r.pd_min, WithinRel(25.0 / (8 * 50 - 50), 1e-12));                           // 1/14
  CHECK_THAT(term(r, "de_cnic_read").value, WithinRel((4 * 50 - 2 * 25) / 50.0, 1e-12));  // 3
  CHECK_THAT(term(r, "de_cnic_write").value, WithinRel((4 * 50 - 25) / 100.0, 1e-12));    // 7/4
  CHECK_THAT(term(r, "de_dram").value, WithinRel((300 - 3 * 25) / 100.0, 1e-12));         // 9/4
  CHECK_THAT(term(r, "pe_cnic_read").value, WithinRel(2 * 50 / 8.0 / 50, 1e-12));         // 1/4
  CHECK_THAT(term(r, "pe_dram").value, WithinRel(100 / 500.0, 1e-12));                    // 1/5
  CHECK_THAT(r.pd_max, WithinRel(1.75, 1e-12));
  CHECK(term(r, "de_cnic_write").formula == "P/D <= (g_d B_dw - sB_d)/(2 sB_p)");
  CHECK(term(r, "pe_cnic_write").formula == "P/D >= sB_d/(g_p B_pw - sB_p)");
  // HBM: (H4) (g_d B_dw - sB_d)/sB_p = 175/50 = 7/2; (H3) sB_d/g_d over B_dr = 1/8; (H5) sB_d/M_d = 1/12.
  const BottleneckRange h = per_role(kPaper, kSmall, DeBuffer::kHbm);
  CHECK_THAT(h.pd_min, WithinRel(1.0 / 14, 1e-12));
  CHECK_THAT(h.pd_max, WithinRel(3.5, 1e-12));
  CHECK_THAT(term(h, "de_cnic_read").value, WithinRel(1.0 / 8, 1e-12));
  CHECK_THAT(term(h, "de_dram").value, WithinRel(1.0 / 12, 1e-12));
  // Swapped roles: lower sB_d/(g_p B - sB_p) = 50/(200 - 25) = 2/7; upper min((400-100)/25, (400-50)/50,
  // (500-150)/50) = 7.
  const BottleneckRange s = per_role(kSmall, kPaper);
  CHECK_THAT(s.pd_min, WithinRel(2.0 / 7, 1e-12));
  CHECK_THAT(s.pd_max, WithinRel(7.0, 1e-12));
}

TEST_CASE("Role range: the ideal loads at the bounds -> the binding resource at exactly its capacity",
          "[unit]") {
  for (DeBuffer b : {DeBuffer::kDram, DeBuffer::kHbm}) {
    const BottleneckRange r = per_role(kPaper, kSmall, b);
    // At P/D = pd_min the PE CNIC write is full; at pd_max the DE CNIC write; nothing is over.
    const LinkLoads lo = sim::cost::ideal_link_loads(r.sides, r.pd_min, 1);
    CHECK_THAT(lo.pe_cnic_write.total_Bps, WithinRel(kPaper.cnic_bw_Bps, 1e-12));
    CHECK_THAT(sim::cost::max_utilisation(lo), WithinRel(1.0, 1e-12));
    const LinkLoads hi = sim::cost::ideal_link_loads(r.sides, r.pd_max, 1);
    CHECK_THAT(hi.de_cnic_write.total_Bps, WithinRel(kSmall.cnic_bw_Bps, 1e-12));
    CHECK_THAT(sim::cost::max_utilisation(hi), WithinRel(1.0, 1e-12));
    // Per pair: T_p = sB_p/(D g_p g_d), T_c = sB_d/(P g_p g_d).
    const LinkLoads mid = sim::cost::ideal_link_loads(r.sides, 2, 4);
    CHECK_THAT(mid.t_p_Bps, WithinRel(50e9 / (4 * 8 * 4), 1e-12));
    CHECK_THAT(mid.t_c_Bps, WithinRel(25e9 / (2 * 8 * 4), 1e-12));
    CHECK(sim::cost::pd_inside(r, 2, 4));
    // Inside the range the best DE share is the SNIC-proportional one and every SNIC runs at line rate.
    const auto share = sim::cost::best_de_share(r.sides, 2, 4);
    CHECK_THAT(share.rate_Bps, WithinRel(2 * 50e9 + 4 * 25e9, 1e-12));
    CHECK_THAT(share.de_share, WithinRel(0.5, 1e-12));
  }
}

TEST_CASE("Role range: table and JSON with two files -> each side's values and per-role formulas", "[unit]") {
  const BottleneckRange r = per_role(kPaper, kSmall);
  const std::string table = sim::cost::format_table(r);
  CHECK_THAT(table, Contains("prefill nodes: g_p = 8 GPUs/node") &&
                        Contains("decode nodes:  g_d = 4 GPUs/node") && Contains("sB_d = 25 GB/s") &&
                        Contains("M_d = 300 GB/s") && Contains("1/14 <= P/D <= 7/4"));
  const auto j = sim::cost::to_json(r);
  CHECK(j.at("inputs").at("prefill").at("g") == 8);
  CHECK(j.at("inputs").at("decode").at("g") == 4);
  CHECK(j.at("inputs").at("decode").at("snic_bw_Bps") == 25e9);
  CHECK(j.at("pd_max_fraction") == "7/4");
  // sided_inputs reads each file's g, B, sB, M.
  const auto in = sim::cost::sided_inputs(kPaper, kSmall, DeBuffer::kHbm);
  CHECK(in.g_pe == 8);
  CHECK(in.g_de == 4);
  CHECK(in.de.dram_Bps == 300e9);
  CHECK(in.pe.cnic_write_Bps == 50e9);
  CHECK(in.de_buffer == DeBuffer::kHbm);
  CHECK_FALSE(in.homogeneous());
  auto bad = sim::cost::bottleneck_range(sim::cost::sided_inputs(kPaper, node(0, 50e9, 50e9, 500e9)));
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Contains("decode gpus_per_node: expected >= 1, got 0"));
}
