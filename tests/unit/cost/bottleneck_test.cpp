// DualPath §4.2 bottleneck-free analysis (sim/cost/bottleneck.h): the paper's numbers, hand-computed
// generalisations, degenerate hardware, and the ideal link loads.
#include "sim/cost/bottleneck.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using sim::cost::BottleneckInputs;
using sim::cost::BottleneckRange;
using sim::cost::BoundTerm;
using sim::cost::LinkLoads;

constexpr double kB = 50e9;  // 400 Gbps

BottleneckRange range_of(int g, double sB, double M) {
  auto r = sim::cost::bottleneck_range(BottleneckInputs{g, kB, sB, M});
  REQUIRE(r.is_ok());
  return r.value();
}

const BoundTerm& term(const BottleneckRange& r, const std::string& key) {
  for (const BoundTerm& t : r.terms) {
    if (t.key == key) return t;
  }
  for (const BoundTerm& t : r.conditions) {
    if (t.key == key) return t;
  }
  FAIL("no term " << key);
  return r.terms.front();
}

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
