// DualPath §4.2 bottleneck-free analysis (sim/cost/bottleneck.h): the paper's numbers, hand-computed
// generalisations, degenerate hardware, and the ideal link loads.
#include "sim/cost/bottleneck.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "tests/unit/cost/range_terms.h"

namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using sim::cost::BottleneckInputs;
using sim::cost::BottleneckRange;
using sim::cost::BoundTerm;
using sim::cost::LinkLoads;

using test_support::kB;  // 400 Gbps

BottleneckRange range_of(int g, double sB, double M) {
  auto r = sim::cost::bottleneck_range(BottleneckInputs{g, kB, sB, M});
  REQUIRE(r.is_ok());
  return r.value();
}

using test_support::term;

LinkLoads paper_loads(double P, double D) {
  return sim::cost::ideal_link_loads(8, kB, kB, 500e9, P, D);
}

}  // namespace

TEST_CASE("Bottleneck: paper hardware g=8 s=1 M/(sB)=10 -> 1/7 <= P/D <= 7/2", "[unit]") {
  const BottleneckRange r = range_of(8, 50e9, 500e9);
  CHECK(r.feasible);
  CHECK(r.reason.empty());
  CHECK_THAT(r.pd_min, WithinAbs(1.0 / 7, 1e-12));
  CHECK_THAT(r.pd_max, WithinAbs(7.0 / 2, 1e-12));
  CHECK_THAT(term(r, "de_cnic_read").value, WithinAbs(6, 1e-12));  // (8 - 2)/1
  CHECK(term(r, "pe_cnic_write").binding);
  CHECK_FALSE(term(r, "de_cnic_read").binding);
  CHECK(term(r, "de_cnic_write").binding);  // (8 - 1)/2 = 3.5, tied with DRAM
  CHECK(term(r, "de_dram").binding);        // (10 - 3)/2 = 3.5
  CHECK(term(r, "pe_cnic_read").holds);     // 2/8
  CHECK(term(r, "pe_dram").holds);          // 100 <= 500 GB/s
  CHECK(sim::cost::simple_fraction(r.pd_min) == "1/7");
  CHECK(sim::cost::simple_fraction(r.pd_max) == "7/2");
  const std::string table = sim::cost::format_table(r);
  CHECK(table.find("1/7 <= P/D <= 7/2") != std::string::npos);
  // Every configuration the paper ran lies inside.
  const std::pair<int, int> paper_configs[] = {{2, 4}, {1, 1}, {1, 2}, {2, 1}, {48, 96}, {44, 88}};
  for (auto [P, D] : paper_configs) {
    INFO(P << "P" << D << "D");
    CHECK(sim::cost::pd_inside(r, P, D));
  }
  CHECK(sim::cost::pd_inside(r, 1, 7));  // ends are inclusive
  CHECK(sim::cost::pd_inside(r, 7, 2));
  CHECK_FALSE(sim::cost::pd_inside(r, 1, 8));
  CHECK_FALSE(sim::cost::pd_inside(r, 4, 1));
}

TEST_CASE("Bottleneck: g=4 s=1 M/(sB)=10 -> 1/3 <= P/D <= 3/2, DE CNIC write binds", "[unit]") {
  const BottleneckRange r = range_of(4, 50e9, 500e9);
  // lower s/(g-s) = 1/(4-1) = 1/3; DE CNIC read (g-2s)/s = (4-2)/1 = 2;
  // DE CNIC write (g-s)/(2s) = (4-1)/2 = 1.5; DE DRAM (M/(sB)-3)/2 = (10-3)/2 = 3.5; PE read 2s/g = 0.5.
  CHECK(r.feasible);
  CHECK_THAT(r.pd_min, WithinAbs(0.3333333333333333, 1e-12));
  CHECK_THAT(r.pd_max, WithinAbs(1.5, 1e-12));
  CHECK_THAT(term(r, "de_cnic_read").value, WithinAbs(2.0, 1e-12));
  CHECK_THAT(term(r, "de_dram").value, WithinAbs(3.5, 1e-12));
  CHECK_THAT(term(r, "pe_cnic_read").value, WithinAbs(0.5, 1e-12));
  CHECK(term(r, "de_cnic_write").binding);
  CHECK_FALSE(term(r, "de_dram").binding);
  CHECK(sim::cost::format_table(r).find("1/3 <= P/D <= 3/2") != std::string::npos);
}

TEST_CASE("Bottleneck: g=8 s=2 M/(sB)=5 -> 1/3 <= P/D <= 1, DE DRAM binds", "[unit]") {
  const BottleneckRange r = range_of(8, 100e9, 500e9);
  // s = 100/50 = 2; M/(sB) = 500/100 = 5. lower 2/(8-2) = 1/3; DE CNIC read (8-4)/2 = 2;
  // DE CNIC write (8-2)/4 = 1.5; DE DRAM (5-3)/2 = 1; PE read 2*2/8 = 0.5.
  CHECK_THAT(r.s, WithinAbs(2.0, 1e-12));
  CHECK(r.feasible);
  CHECK_THAT(r.pd_min, WithinAbs(0.3333333333333333, 1e-12));
  CHECK_THAT(r.pd_max, WithinAbs(1.0, 1e-12));
  CHECK_THAT(term(r, "de_cnic_write").value, WithinAbs(1.5, 1e-12));
  CHECK(term(r, "de_dram").binding);
  CHECK_FALSE(term(r, "de_cnic_write").binding);
}

TEST_CASE("Bottleneck: degenerate hardware -> empty range with a reason, no division by zero", "[unit]") {
  SECTION("g == s: PE CNIC write can never fit") {
    const BottleneckRange r = range_of(1, 50e9, 500e9);
    CHECK_FALSE(r.feasible);
    CHECK(std::isinf(r.pd_min));
    CHECK(r.reason.find("PE CNIC write") != std::string::npos);
    CHECK(sim::cost::to_json(r)["pd_min"].is_null());
    CHECK_FALSE(sim::cost::pd_inside(r, 1, 1));
  }
  SECTION("s > g/2: PE CNIC read (1) is violated") {
    const BottleneckRange r = range_of(2, 75e9, 500e9);  // s = 1.5, 2s/g = 1.5
    CHECK_FALSE(r.feasible);
    CHECK_FALSE(term(r, "pe_cnic_read").holds);
    CHECK(r.reason.find("PE CNIC read") != std::string::npos);
  }
  SECTION("s == g/2: (1) holds with equality but the DE CNIC read bound is 0") {
    const BottleneckRange r = range_of(2, 50e9, 500e9);
    CHECK(term(r, "pe_cnic_read").holds);
    CHECK_THAT(r.pd_max, WithinAbs(0.0, 1e-12));
    CHECK_FALSE(r.feasible);
    CHECK(r.reason.find("DE CNIC read") != std::string::npos);
  }
  SECTION("M/(sB) == 3: DE DRAM leaves no P/D > 0") {
    const BottleneckRange r = range_of(8, 50e9, 150e9);
    CHECK_THAT(term(r, "de_dram").value, WithinAbs(0.0, 1e-12));
    CHECK_FALSE(r.feasible);
    CHECK(r.reason.find("DE DRAM") != std::string::npos);
    CHECK(term(r, "pe_dram").holds);  // 2sB = 100 <= 150
  }
  SECTION("M/(sB) < 2: DE DRAM bound negative and PE DRAM violated") {
    const BottleneckRange r = range_of(8, 50e9, 75e9);
    CHECK(term(r, "de_dram").value < 0);
    CHECK_FALSE(term(r, "pe_dram").holds);
    CHECK_FALSE(r.feasible);
  }
  SECTION("large s: feasible while s/(g-s) <= (g-2s)/s, empty beyond") {
    const BottleneckRange r = range_of(3, 50e9, 500e9);  // lower 1/2, DE CNIC read (3-2)/1 = 1, write 1
    CHECK(r.feasible);
    const BottleneckRange r2 = range_of(8, 150e9, 5000e9);  // s=3: lower 3/5, DE read 2/3, write 5/6
    CHECK(r2.feasible);
    CHECK_THAT(r2.pd_max, WithinAbs(2.0 / 3, 1e-12));
    const BottleneckRange r3 = range_of(8, 170e9, 5000e9);  // s=3.4: lower 3.4/4.6 > DE read 1.2/3.4
    CHECK_FALSE(r3.feasible);
    CHECK(r3.pd_min > r3.pd_max);
    CHECK(r3.reason.find("lower bound") != std::string::npos);
  }
}

TEST_CASE("Bottleneck: invalid inputs -> error naming the field", "[unit]") {
  auto bad_g = sim::cost::bottleneck_range(BottleneckInputs{0, kB, kB, 500e9});
  REQUIRE_FALSE(bad_g.is_ok());
  CHECK(bad_g.status().message().find("gpus_per_node") != std::string::npos);
  auto bad_sb = sim::cost::bottleneck_range(BottleneckInputs{8, kB, 0, 500e9});
  REQUIRE_FALSE(bad_sb.is_ok());
  CHECK(bad_sb.status().message().find("snic_bw_Bps") != std::string::npos);
  auto bad_m = sim::cost::bottleneck_range(BottleneckInputs{8, kB, kB, std::nan("")});
  REQUIRE_FALSE(bad_m.is_ok());
  CHECK(bad_m.status().message().find("dram_bw_Bps") != std::string::npos);
}

TEST_CASE("Bottleneck: ideal link loads at 2P4D on paper hardware -> hand-computed bytes/s", "[unit]") {
  const LinkLoads l = paper_loads(2, 4);
  // T_p = sB/(D g^2) = 50e9/(4*64) = 195.3125e6; T_c = 50e9/(2*64) = 390.625e6.
  CHECK_THAT(l.t_p_Bps, WithinRel(195.3125e6, 1e-12));
  CHECK_THAT(l.t_c_Bps, WithinRel(390.625e6, 1e-12));
  // PE CNIC read 2 T_p D g = 2 * 195.3125e6 * 32 = 12.5e9 (= 2sB/g).
  CHECK_THAT(l.pe_cnic_read.total_Bps, WithinRel(12.5e9, 1e-12));
  CHECK(l.pe_cnic_read.de_path_Bps == 0);
  // PE CNIC write (T_p + T_c) D g = 6.25e9 + 12.5e9 = 18.75e9.
  CHECK_THAT(l.pe_cnic_write.pe_path_Bps, WithinRel(6.25e9, 1e-12));
  CHECK_THAT(l.pe_cnic_write.de_path_Bps, WithinRel(12.5e9, 1e-12));
  CHECK_THAT(l.pe_cnic_write.total_Bps, WithinRel(18.75e9, 1e-12));
  // DE CNIC read (T_p + 2 T_c) P g = 3.125e9 + 12.5e9 = 15.625e9.
  CHECK_THAT(l.de_cnic_read.total_Bps, WithinRel(15.625e9, 1e-12));
  // DE CNIC write (2 T_p + T_c) P g = 6.25e9 + 6.25e9 = 12.5e9.
  CHECK_THAT(l.de_cnic_write.total_Bps, WithinRel(12.5e9, 1e-12));
  // PE DRAM 2 sB = 100e9; DE DRAM (3 + 2*2/4) sB = 4 * 50e9 = 200e9 (50e9 PE path + 150e9 DE path).
  CHECK_THAT(l.pe_dram.total_Bps, WithinRel(100e9, 1e-12));
  CHECK_THAT(l.de_dram.pe_path_Bps, WithinRel(50e9, 1e-12));
  CHECK_THAT(l.de_dram.total_Bps, WithinRel(200e9, 1e-12));
  CHECK(l.pe_snic.total_Bps == 50e9);
  CHECK(l.de_snic.total_Bps == 50e9);
  CHECK_THAT(sim::cost::max_utilisation(l), WithinRel(0.4, 1e-12));  // DE DRAM 200/500
}

TEST_CASE("Bottleneck: link loads at the range ends -> the binding links are exactly full", "[unit]") {
  const LinkLoads lo = paper_loads(1, 7);  // P/D = 1/7
  CHECK_THAT(lo.pe_cnic_write.total_Bps, WithinRel(kB, 1e-12));
  CHECK_THAT(sim::cost::max_utilisation(lo), WithinRel(1.0, 1e-12));
  const LinkLoads hi = paper_loads(7, 2);  // P/D = 7/2
  CHECK_THAT(hi.de_cnic_write.total_Bps, WithinRel(kB, 1e-12));
  CHECK_THAT(hi.de_dram.total_Bps, WithinRel(500e9, 1e-12));
  CHECK(hi.de_cnic_read.total_Bps < kB);  // 6.25e9 * (3.5 + 2) = 34.375e9
  CHECK_THAT(sim::cost::max_utilisation(hi), WithinRel(1.0, 1e-12));
}

TEST_CASE("Bottleneck: any P, D -> loads conserve bytes and fit capacity exactly inside the range",
          "[unit]") {
  const int g = 8;
  const BottleneckRange r = range_of(g, kB, 500e9);
  for (double P : {1.0, 2.0, 3.0, 7.0, 13.0, 48.0}) {
    for (double D : {1.0, 2.0, 4.0, 7.0, 8.0, 96.0}) {
      INFO("P = " << P << ", D = " << D);
      const LinkLoads l = paper_loads(P, D);
      // Every CNIC byte is read on one CNIC and written on one (loopback: the same CNIC).
      const double reads = P * g * l.pe_cnic_read.total_Bps + D * g * l.de_cnic_read.total_Bps;
      const double writes = P * g * l.pe_cnic_write.total_Bps + D * g * l.de_cnic_write.total_Bps;
      CHECK_THAT(reads, WithinRel(writes, 1e-12));
      // DE DRAM = SNIC write + all CNIC reads from DRAM + PE-path CNIC writes into DRAM (step 7).
      CHECK_THAT(l.de_dram.total_Bps, WithinRel(l.de_snic.total_Bps + g * l.de_cnic_read.total_Bps +
                                                    g * l.de_cnic_write.pe_path_Bps / 2,
                                                1e-12));
      // PE DRAM = SNIC write + H2D reads (half of the PE CNIC read).
      CHECK_THAT(l.pe_dram.total_Bps,
                 WithinRel(l.pe_snic.total_Bps + g * l.pe_cnic_read.total_Bps / 2, 1e-12));
      const bool fits = sim::cost::max_utilisation(l) <= 1 + 1e-12;
      CHECK(fits == sim::cost::pd_inside(r, P, D));
    }
  }
}

TEST_CASE("Bottleneck: JSON and fractions -> keys, nulls and simple fractions", "[unit]") {
  const BottleneckRange r = range_of(8, kB, 500e9);
  const LinkLoads l = paper_loads(2, 4);
  const nlohmann::json j = sim::cost::to_json(r, &l);
  CHECK(j["pd_min_fraction"] == "1/7");
  CHECK(j["pd_max_fraction"] == "7/2");
  CHECK(j["feasible"] == true);
  CHECK(j["terms"]["de_dram"]["binding"] == true);
  CHECK(j["terms"]["de_cnic_write"]["resource"] == "DE CNIC write");
  CHECK(j["conditions"]["pe_cnic_read"]["holds"] == true);
  CHECK(j["point"]["inside"] == true);
  CHECK_THAT(j["point"]["pe_cnic_write"]["total_Bps"].get<double>(), WithinRel(18.75e9, 1e-12));
  CHECK(sim::cost::simple_fraction(6.0) == "6");
  CHECK(sim::cost::simple_fraction(-0.5) == "-1/2");
  CHECK(sim::cost::simple_fraction(std::sqrt(2.0)).empty());
  CHECK(sim::cost::simple_fraction(std::numeric_limits<double>::infinity()) == "inf");
}

// The DE buffer in HBM (cluster.de_buffer = hbm): inequalities (H1)-(H7), derived in sim/README.md, "The DE
// buffer in DRAM or in HBM". Per (PE GPU, DE GPU) pair T_p = sB/(D g^2), T_c = sB/(P g^2); routes:
//   PE path  storage -> PE DRAM; PE DRAM -> PE CNIC read -> PE CNIC write -> PE GPU (H2D);
//            PE GPU -> PE CNIC read -> DE CNIC write -> DE GPU
//   DE path  storage -> DE DRAM (once) -> DE CNIC write -> DE GPU; DE GPU -> DE CNIC read -> PE CNIC write
// so  PE CNIC read 2 T_p D g = 2sB/g;  PE CNIC write (T_p + T_c) D g = sB/g (1 + D/P);
//     DE CNIC read T_c P g = sB/g;     DE CNIC write (T_p + T_c) P g = sB/g (1 + P/D);
//     PE DRAM 2 sB;  DE DRAM sB.
namespace {

BottleneckRange hbm_range_of(int g, double sB, double M) {
  auto r = sim::cost::bottleneck_range(BottleneckInputs{g, kB, sB, M, sim::config::DeBuffer::kHbm});
  REQUIRE(r.is_ok());
  return r.value();
}

LinkLoads hbm_loads(int g, double sB, double M, double P, double D) {
  return sim::cost::ideal_link_loads(g, kB, sB, M, P, D, sim::config::DeBuffer::kHbm);
}

}  // namespace

TEST_CASE("Bottleneck hbm: paper hardware g=8 s=1 M=500 GB/s -> 1/7 <= P/D <= 7, CNIC writes bind",
          "[unit]") {
  const BottleneckRange r = hbm_range_of(8, 50e9, 500e9);
  // lower s/(g-s) = 1/7 (PE CNIC write); upper (g-s)/s = 7 (DE CNIC write); conditions: PE CNIC read
  // 2s/g = 1/4, DE CNIC read s/g = 1/8, DE DRAM sB/M = 1/10, PE DRAM 2sB/M = 1/5.
  CHECK(r.feasible);
  CHECK(r.reason.empty());
  CHECK(r.in.de_buffer == sim::config::DeBuffer::kHbm);
  CHECK_THAT(r.pd_min, WithinAbs(1.0 / 7, 1e-12));
  CHECK_THAT(r.pd_max, WithinAbs(7.0, 1e-12));
  REQUIRE(r.terms.size() == 2);
  CHECK(term(r, "pe_cnic_write").binding);
  CHECK(term(r, "pe_cnic_write").inequality == "(H2)");
  CHECK(term(r, "de_cnic_write").binding);
  CHECK(term(r, "de_cnic_write").kind == sim::cost::TermKind::kUpper);
  CHECK(term(r, "de_cnic_write").inequality == "(H4)");
  REQUIRE(r.conditions.size() == 4);
  CHECK_THAT(term(r, "pe_cnic_read").value, WithinAbs(0.25, 1e-12));
  CHECK_THAT(term(r, "de_cnic_read").value, WithinAbs(0.125, 1e-12));
  CHECK(term(r, "de_cnic_read").kind == sim::cost::TermKind::kCondition);
  CHECK_THAT(term(r, "de_dram").value, WithinAbs(0.1, 1e-12));
  CHECK(term(r, "de_dram").kind == sim::cost::TermKind::kCondition);
  CHECK_THAT(term(r, "pe_dram").value, WithinAbs(0.2, 1e-12));
  for (const BoundTerm& c : r.conditions) CHECK(c.holds);
  const std::string table = sim::cost::format_table(r);
  CHECK(table.find("1/7 <= P/D <= 7") != std::string::npos);
  CHECK(table.find("HBM") != std::string::npos);
  CHECK(sim::cost::pd_inside(r, 7, 1));  // 7/2 and above, outside with the DE buffer in DRAM
  CHECK(sim::cost::pd_inside(r, 4, 1));
  CHECK(sim::cost::pd_inside(r, 1, 7));
  CHECK_FALSE(sim::cost::pd_inside(r, 8, 1));
  CHECK_FALSE(sim::cost::pd_inside(r, 1, 8));
  // The same hardware with the DE buffer in DRAM keeps the paper's range.
  CHECK_THAT(range_of(8, 50e9, 500e9).pd_max, WithinAbs(3.5, 1e-12));
}

TEST_CASE("Bottleneck hbm: g=4 s=1 and g=8 s=2 M=500 -> 1/3 <= P/D <= 3, and M=150 feasible", "[unit]") {
  // g=4, s=1: lower 1/(4-1) = 1/3, upper (4-1)/1 = 3 (the DRAM range would be 1/3 .. 3/2).
  const BottleneckRange a = hbm_range_of(4, 50e9, 500e9);
  CHECK(a.feasible);
  CHECK_THAT(a.pd_min, WithinAbs(1.0 / 3, 1e-12));
  CHECK_THAT(a.pd_max, WithinAbs(3.0, 1e-12));
  CHECK(sim::cost::format_table(a).find("1/3 <= P/D <= 3") != std::string::npos);
  // g=8, s=2 (sB = 100 GB/s), M = 500: lower 2/6 = 1/3, upper 6/2 = 3; PE CNIC read 4/8, DE CNIC read 2/8,
  // DE DRAM 100/500, PE DRAM 200/500. With the DE buffer in DRAM the DE DRAM bound (5-3)/2 = 1 binds.
  const BottleneckRange b = hbm_range_of(8, 100e9, 500e9);
  CHECK(b.feasible);
  CHECK_THAT(b.pd_min, WithinAbs(1.0 / 3, 1e-12));
  CHECK_THAT(b.pd_max, WithinAbs(3.0, 1e-12));
  CHECK_THAT(term(b, "pe_cnic_read").value, WithinAbs(0.5, 1e-12));
  CHECK_THAT(term(b, "de_cnic_read").value, WithinAbs(0.25, 1e-12));
  CHECK_THAT(term(b, "de_dram").value, WithinAbs(0.2, 1e-12));
  CHECK_THAT(term(b, "pe_dram").value, WithinAbs(0.4, 1e-12));
  CHECK_THAT(range_of(8, 100e9, 500e9).pd_max, WithinAbs(1.0, 1e-12));
  // M = 150 GB/s with s = 1, g = 8: the DRAM variant is empty ((3-3)/2 = 0), the HBM one is not: the DE DRAM
  // carries sB = 50 and the PE DRAM 2sB = 100, both <= 150.
  const BottleneckRange c = hbm_range_of(8, 50e9, 150e9);
  CHECK(c.feasible);
  CHECK_THAT(c.pd_max, WithinAbs(7.0, 1e-12));
  CHECK_FALSE(range_of(8, 50e9, 150e9).feasible);
}

TEST_CASE("Bottleneck hbm: degenerate hardware -> empty range with the resource that fails", "[unit]") {
  // 2sB > M: the PE DRAM cannot carry the PE path's write and read for any P/D.
  const BottleneckRange pe_dram = hbm_range_of(8, 50e9, 80e9);
  CHECK_FALSE(pe_dram.feasible);
  CHECK_FALSE(term(pe_dram, "pe_dram").holds);
  CHECK(term(pe_dram, "de_dram").holds);  // 50 <= 80
  CHECK(pe_dram.reason.find("PE DRAM") != std::string::npos);
  // sB > M: both DRAMs fail.
  const BottleneckRange de_dram = hbm_range_of(8, 50e9, 40e9);
  CHECK_FALSE(de_dram.feasible);
  CHECK_FALSE(term(de_dram, "de_dram").holds);
  // s = g/2 (sB = 200 GB/s, g = 8): lower 4/4 = 1 = upper 4/4: the single point P/D = 1.
  const BottleneckRange edge = hbm_range_of(8, 200e9, 5000e9);
  CHECK(edge.feasible);
  CHECK_THAT(edge.pd_min, WithinAbs(1.0, 1e-12));
  CHECK_THAT(edge.pd_max, WithinAbs(1.0, 1e-12));
  // s > g/2 (s = 5): (H1) fails, and the lower bound 5/3 passes the upper 3/5.
  const BottleneckRange wide = hbm_range_of(8, 250e9, 5000e9);
  CHECK_FALSE(wide.feasible);
  CHECK_FALSE(term(wide, "pe_cnic_read").holds);
  CHECK(wide.reason.find("PE CNIC read") != std::string::npos);
  CHECK(wide.pd_min > wide.pd_max);
  // g = s: no P/D keeps the PE CNIC write within B.
  const BottleneckRange one = hbm_range_of(1, 50e9, 500e9);
  CHECK_FALSE(one.feasible);
  CHECK(one.reason.find("PE CNIC write") != std::string::npos);
}

TEST_CASE("Bottleneck hbm: ideal link loads at 2P4D and at 7P1D on paper hardware -> hand-computed bytes/s",
          "[unit]") {
  // 2P4D: T_p = 50e9/(4*64) = 195.3125e6, T_c = 50e9/(2*64) = 390.625e6; a PE GPU pairs with D g = 32 DE
  // GPUs, a DE GPU with P g = 16 PE GPUs.
  const LinkLoads l = hbm_loads(8, 50e9, 500e9, 2, 4);
  CHECK(l.de_buffer == sim::config::DeBuffer::kHbm);
  CHECK_THAT(l.pe_cnic_read.total_Bps, WithinRel(12.5e9, 1e-12));    // 2 T_p x 32
  CHECK_THAT(l.pe_cnic_write.total_Bps, WithinRel(18.75e9, 1e-12));  // (T_p + T_c) x 32
  CHECK_THAT(l.de_cnic_read.total_Bps, WithinRel(6.25e9, 1e-12));    // T_c x 16
  CHECK(l.de_cnic_read.pe_path_Bps == 0);
  CHECK_THAT(l.de_cnic_write.pe_path_Bps, WithinRel(3.125e9, 1e-12));  // T_p x 16
  CHECK_THAT(l.de_cnic_write.de_path_Bps, WithinRel(6.25e9, 1e-12));   // T_c x 16
  CHECK_THAT(l.de_cnic_write.total_Bps, WithinRel(9.375e9, 1e-12));
  CHECK_THAT(l.pe_dram.total_Bps, WithinRel(100e9, 1e-12));
  CHECK_THAT(l.de_dram.total_Bps, WithinRel(50e9, 1e-12));
  CHECK(l.de_dram.pe_path_Bps == 0);
  CHECK_THAT(sim::cost::max_utilisation(l), WithinRel(0.375, 1e-12));  // PE CNIC write 18.75/50
  // 7P1D (P/D = 7, the upper end): T_p = 50e9/64, T_c = 50e9/(7*64); DE CNIC write (T_p + T_c) x 56
  // = 43.75e9 + 6.25e9 = 50e9 = B exactly; DE CNIC read 6.25e9.
  const LinkLoads hi = hbm_loads(8, 50e9, 500e9, 7, 1);
  CHECK_THAT(hi.de_cnic_write.pe_path_Bps, WithinRel(43.75e9, 1e-12));
  CHECK_THAT(hi.de_cnic_write.total_Bps, WithinRel(kB, 1e-12));
  CHECK_THAT(hi.de_cnic_read.total_Bps, WithinRel(6.25e9, 1e-12));
  CHECK_THAT(sim::cost::max_utilisation(hi), WithinRel(1.0, 1e-12));
  // With the DE buffer in DRAM the same point loads the DE CNIC write with (2 T_p + T_c) x 56 = 93.75e9.
  CHECK_THAT(paper_loads(7, 1).de_cnic_write.total_Bps, WithinRel(93.75e9, 1e-12));
  // 1P7D (the lower end): PE CNIC write (T_p + T_c) x 56 = 6.25e9 + 43.75e9 = B.
  const LinkLoads lo = hbm_loads(8, 50e9, 500e9, 1, 7);
  CHECK_THAT(lo.pe_cnic_write.total_Bps, WithinRel(kB, 1e-12));
}

TEST_CASE("Bottleneck hbm: any P, D -> loads conserve bytes and fit capacity exactly inside the range",
          "[unit]") {
  for (const auto& [g, sB] : {std::pair<int, double>{8, 50e9}, {4, 50e9}, {8, 100e9}}) {
    const BottleneckRange r = hbm_range_of(g, sB, 500e9);
    for (double P : {1.0, 2.0, 3.0, 7.0, 9.0, 48.0}) {
      for (double D : {1.0, 2.0, 4.0, 7.0, 8.0, 96.0}) {
        INFO("g = " << g << ", sB = " << sB << ", P = " << P << ", D = " << D);
        const LinkLoads l = hbm_loads(g, sB, 500e9, P, D);
        // Every CNIC byte read is written by a CNIC; the DE-side storage reads are written into the DE GPUs
        // with no CNIC read (they come from the SNIC through the DRAM).
        const double reads = P * g * l.pe_cnic_read.total_Bps + D * g * l.de_cnic_read.total_Bps;
        const double writes = P * g * l.pe_cnic_write.total_Bps + D * g * l.de_cnic_write.total_Bps;
        CHECK_THAT(writes, WithinRel(reads + D * l.de_snic.total_Bps, 1e-12));
        // DE DRAM = exactly the DE SNIC's reads (nothing else crosses it); PE DRAM as with dram.
        CHECK_THAT(l.de_dram.total_Bps, WithinRel(l.de_snic.total_Bps, 1e-12));
        CHECK_THAT(l.pe_dram.total_Bps,
                   WithinRel(l.pe_snic.total_Bps + g * l.pe_cnic_read.total_Bps / 2, 1e-12));
        const bool fits = sim::cost::max_utilisation(l) <= 1 + 1e-12;
        CHECK(fits == sim::cost::pd_inside(r, P, D));
      }
    }
  }
}

TEST_CASE("Bottleneck hbm: JSON and inputs -> the variant is named, DE read and DRAM are conditions",
          "[unit]") {
  const BottleneckRange r = hbm_range_of(8, kB, 500e9);
  const LinkLoads l = hbm_loads(8, kB, 500e9, 7, 1);
  const nlohmann::json j = sim::cost::to_json(r, &l);
  CHECK(j["inputs"]["de_buffer"] == "hbm");
  CHECK(j["pd_min_fraction"] == "1/7");
  CHECK(j["pd_max_fraction"] == "7");
  CHECK(j["terms"].size() == 2);
  CHECK(j["terms"]["de_cnic_write"]["binding"] == true);
  CHECK(j["conditions"]["de_dram"]["holds"] == true);
  CHECK(j["conditions"]["de_cnic_read"]["holds"] == true);
  CHECK(j["point"]["de_buffer"] == "hbm");
  CHECK(j["point"]["inside"] == true);
  CHECK(sim::cost::to_json(range_of(8, kB, 500e9))["inputs"]["de_buffer"] == "dram");
  sim::config::HardwareSpec hw;
  CHECK(sim::cost::bottleneck_inputs(hw).de_buffer == sim::config::DeBuffer::kDram);
  CHECK(sim::cost::bottleneck_inputs(hw, sim::config::DeBuffer::kHbm).de_buffer ==
        sim::config::DeBuffer::kHbm);
}
