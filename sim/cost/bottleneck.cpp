#include "sim/cost/bottleneck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "sim/core/check.h"

namespace sim::cost {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEndTolerance = 1e-12;  // relative, at the ends of [pd_min, pd_max]

Load make_load(double pe_path, double de_path) {
  return Load{pe_path, de_path, pe_path + de_path};
}

BoundTerm make_term(const char* key, const char* resource, const char* label, const char* inequality,
                    const char* formula, TermKind kind, double value) {
  BoundTerm t;
  t.key = key;
  t.resource = resource;
  t.label = label;
  t.inequality = inequality;
  t.formula = formula;
  t.kind = kind;
  t.value = value;
  return t;
}

const char* kind_name(TermKind k) {
  switch (k) {
    case TermKind::kLower:
      return "lower";
    case TermKind::kUpper:
      return "upper";
    case TermKind::kCondition:
      return "condition";
  }
  return "?";
}

// "1/7 = 0.142857", "6", "inf", or just the decimal when it is not a simple fraction.
std::string fraction_and_decimal(double x) {
  std::string f = simple_fraction(x);
  std::string dec = fmt::format("{:.6g}", x);
  if (f.empty()) return dec;
  if (f == dec || !std::isfinite(x)) return f;
  return f + " = " + dec;
}

std::string short_value(double x) {
  std::string f = simple_fraction(x);
  return f.empty() ? fmt::format("{:.6g}", x) : f;
}

double gbps(double Bps) {
  return Bps / 1e9;
}

nlohmann::json number_or_null(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}

nlohmann::json load_json(const Load& l, double capacity) {
  return {{"pe_path_Bps", l.pe_path_Bps},
          {"de_path_Bps", l.de_path_Bps},
          {"total_Bps", l.total_Bps},
          {"capacity_Bps", capacity},
          {"utilisation", l.total_Bps / capacity}};
}

nlohmann::json term_json(const BoundTerm& t) {
  nlohmann::json j = {
      {"kind", kind_name(t.kind)},           {"resource", t.resource}, {"label", t.label},
      {"inequality", t.inequality},          {"formula", t.formula},   {"value", number_or_null(t.value)},
      {"fraction", simple_fraction(t.value)}};
  if (t.kind == TermKind::kCondition) {
    j["holds"] = t.holds;
  } else {
    j["binding"] = t.binding;
  }
  return j;
}

}  // namespace

BottleneckInputs bottleneck_inputs(const config::HardwareSpec& hw, config::DeBuffer de_buffer) {
  return BottleneckInputs{hw.gpus_per_node, hw.cnic_bw_Bps, hw.snic_bw_Bps, hw.dram_bw_Bps, de_buffer};
}

LinkLoads ideal_link_loads(int g, double B, double sB, double M, double P, double D,
                           config::DeBuffer de_buffer) {
  SIM_CHECK(g >= 1, "g = {}", g);
  SIM_CHECK(positive_finite(B) && positive_finite(sB) && positive_finite(M), "B={} sB={} M={}", B, sB, M);
  return ideal_link_loads(sided(BottleneckInputs{g, B, sB, M, de_buffer}), P, D);
}

LinkLoads ideal_link_loads(const SidedInputs& in, double P, double D) {
  SIM_CHECK(in.g_pe >= 1 && in.g_de >= 1, "g_pe = {}, g_de = {}", in.g_pe, in.g_de);
  for (const SideBandwidths* side : {&in.pe, &in.de})
    SIM_CHECK(positive_finite(side->cnic_read_Bps) && positive_finite(side->cnic_write_Bps) &&
                  positive_finite(side->snic_Bps) && positive_finite(side->dram_Bps),
              "B={}/{} sB={} M={}", side->cnic_read_Bps, side->cnic_write_Bps, side->snic_Bps,
              side->dram_Bps);
  SIM_CHECK(positive_finite(P) && positive_finite(D), "P={} D={}", P, D);
  LinkLoads l;
  l.p = P;
  l.d = D;
  l.in = in;
  const double gp = static_cast<double>(in.g_pe), gd = static_cast<double>(in.g_de);
  const double sb_pe = in.pe.snic_Bps, sb_de = in.de.snic_Bps;
  l.t_p_Bps = sb_pe / (D * gp * gd);
  l.t_c_Bps = sb_de / (P * gp * gd);
  const double pe_pairs = D * gd;  // DE GPUs each PE GPU talks to
  const double de_pairs = P * gp;  // PE GPUs each DE GPU talks to
  l.de_buffer = in.de_buffer;
  l.pe_cnic_read = make_load(2 * l.t_p_Bps * pe_pairs, 0);
  l.pe_cnic_write = make_load(l.t_p_Bps * pe_pairs, l.t_c_Bps * pe_pairs);
  l.pe_dram = make_load(2 * sb_pe, 0);
  if (in.de_buffer == config::DeBuffer::kHbm) {
    // PE path: PE GPU -> DE GPU (DE CNIC write); DE path: storage -> DE DRAM -> DE GPU (DE DRAM once,
    // DE CNIC write), then DE GPU -> PE GPU (DE CNIC read). No H2D on the DE.
    l.de_cnic_read = make_load(0, l.t_c_Bps * de_pairs);
    l.de_cnic_write = make_load(l.t_p_Bps * de_pairs, l.t_c_Bps * de_pairs);
    l.de_dram = make_load(0, sb_de);
  } else {
    l.de_cnic_read = make_load(l.t_p_Bps * de_pairs, 2 * l.t_c_Bps * de_pairs);
    l.de_cnic_write = make_load(2 * l.t_p_Bps * de_pairs, l.t_c_Bps * de_pairs);
    l.de_dram = make_load(2 * sb_pe * P / D, 3 * sb_de);
  }
  l.pe_snic = make_load(sb_pe, 0);
  l.de_snic = make_load(0, sb_de);
  return l;
}

double max_utilisation(const LinkLoads& l) {
  const SideBandwidths& pe = l.in.pe;
  const SideBandwidths& de = l.in.de;
  return std::max({l.pe_cnic_read.total_Bps / pe.cnic_read_Bps, l.pe_cnic_write.total_Bps / pe.cnic_write_Bps,
                   l.de_cnic_read.total_Bps / de.cnic_read_Bps, l.de_cnic_write.total_Bps / de.cnic_write_Bps,
                   l.pe_dram.total_Bps / pe.dram_Bps, l.de_dram.total_Bps / de.dram_Bps});
}

bool SidedInputs::homogeneous() const {
  return g_pe == g_de && pe.cnic_read_Bps == pe.cnic_write_Bps && de.cnic_read_Bps == pe.cnic_read_Bps &&
         de.cnic_write_Bps == pe.cnic_write_Bps && de.snic_Bps == pe.snic_Bps && de.dram_Bps == pe.dram_Bps;
}

SidedInputs sided(const BottleneckInputs& in) {
  const SideBandwidths side{in.cnic_Bps, in.cnic_Bps, in.snic_Bps, in.dram_Bps};
  return SidedInputs{in.g, in.g, side, side, in.de_buffer};
}

SidedInputs sided_inputs(const config::HardwareSpec& prefill, const config::HardwareSpec& decode,
                         config::DeBuffer de_buffer) {
  auto side = [](const config::HardwareSpec& hw) {
    return SideBandwidths{hw.cnic_bw_Bps, hw.cnic_bw_Bps, hw.snic_bw_Bps, hw.dram_bw_Bps};
  };
  return SidedInputs{prefill.gpus_per_node, decode.gpus_per_node, side(prefill), side(decode), de_buffer};
}

StatusOr<BottleneckRange> bottleneck_range(const BottleneckInputs& in) {
  if (in.g < 1) return Status::error(fmt::format("bottleneck: gpus_per_node: expected >= 1, got {}", in.g));
  const std::pair<const char*, double> bws[] = {
      {"cnic_bw_Bps", in.cnic_Bps}, {"snic_bw_Bps", in.snic_Bps}, {"dram_bw_Bps", in.dram_Bps}};
  for (const auto& [name, v] : bws) {
    if (!positive_finite(v)) {
      return Status::error(fmt::format("bottleneck: {}: expected a finite bandwidth > 0, got {}", name, v));
    }
  }
  auto r = bottleneck_range(sided(in));
  if (r) r->in = in;
  return r;
}

// Each bound is written in ratios of one side's bandwidth to another's, so that with equal sides every
// ratio is s = sB/B, M/(sB) or 1 and the arithmetic is the homogeneous form's, operation for operation.
StatusOr<BottleneckRange> bottleneck_range(const SidedInputs& in) {
  for (const auto& [name, g] : {std::pair<const char*, int>{"", in.g_pe}, {"decode ", in.g_de}})
    if (g < 1)
      return Status::error(fmt::format("bottleneck: {}gpus_per_node: expected >= 1, got {}", name, g));
  const std::pair<const char*, double> bws[] = {
      {"pe.cnic_read_Bps", in.pe.cnic_read_Bps}, {"pe.cnic_write_Bps", in.pe.cnic_write_Bps},
      {"pe.snic_Bps", in.pe.snic_Bps},           {"pe.dram_Bps", in.pe.dram_Bps},
      {"de.cnic_read_Bps", in.de.cnic_read_Bps}, {"de.cnic_write_Bps", in.de.cnic_write_Bps},
      {"de.snic_Bps", in.de.snic_Bps},           {"de.dram_Bps", in.de.dram_Bps}};
  for (const auto& [name, v] : bws) {
    if (!positive_finite(v)) {
      return Status::error(fmt::format("bottleneck: {}: expected a finite bandwidth > 0, got {}", name, v));
    }
  }
  const SideBandwidths& pe = in.pe;
  const SideBandwidths& de = in.de;
  BottleneckRange r;
  r.in = BottleneckInputs{in.g_pe, pe.cnic_write_Bps, pe.snic_Bps, pe.dram_Bps, in.de_buffer};
  r.sides = in;
  r.per_role = !in.homogeneous();
  // The formula of each term: homogeneous, or per role (the header's symbols).
  auto f = [&r](const char* homogeneous, const char* per_role) {
    return r.per_role ? per_role : homogeneous;
  };
  const double g = in.g_pe;                          // PE-side terms
  const double gd = in.g_de;                         // DE-side terms
  const double s = pe.snic_Bps / pe.cnic_write_Bps;  // PE SNIC over PE CNIC write
  r.s = s;
  r.m_over_sb = pe.dram_Bps / pe.snic_Bps;

  const bool hbm = in.de_buffer == config::DeBuffer::kHbm;
  // (2)-(3) = (H2): sB_pe/g + sB_de D/(P g) <= B_pe,w. With g <= sB_pe/B_pe,w even D/P -> 0 leaves the
  // PE-path H2D alone at or above B_pe,w: no P/D works.
  const double lower = g > s ? (de.snic_Bps / pe.cnic_write_Bps) / (g - s) : kInf;
  r.terms.push_back(make_term("pe_cnic_write", "PE CNIC write",
                              "H2D of PE-path KV into each PE GPU plus DE-path KV arriving by RDMA",
                              hbm ? "(H2)" : "(2)-(3)", f("P/D >= s/(g-s)", "P/D >= sB_d/(g_p B_pw - sB_p)"),
                              TermKind::kLower, lower));
  const double s_dw = de.snic_Bps / de.cnic_write_Bps;  // DE SNIC over DE CNIC write
  const double p_dw = pe.snic_Bps / de.cnic_write_Bps;  // PE SNIC over DE CNIC write
  if (hbm) {
    r.terms.push_back(make_term("de_cnic_write", "DE CNIC write",
                                "PE-path KV written into the DE GPU, plus DE-path KV read from storage "
                                "into the DE GPU",
                                "(H4)", f("P/D <= (g-s)/s", "P/D <= (g_d B_dw - sB_d)/sB_p"),
                                TermKind::kUpper, (gd - s_dw) / p_dw));
  } else {
    const double s_dr = de.snic_Bps / de.cnic_read_Bps;  // DE SNIC over DE CNIC read
    const double p_dr = pe.snic_Bps / de.cnic_read_Bps;  // PE SNIC over DE CNIC read
    r.terms.push_back(make_term("de_cnic_read", "DE CNIC read",
                                "PE-path KV read from the DE buffer for H2D plus DE-path KV read twice "
                                "(RDMA to the PE, H2D to the DE GPU)",
                                "(4)-(5)", f("P/D <= (g-2s)/s", "P/D <= (g_d B_dr - 2 sB_d)/sB_p"),
                                TermKind::kUpper, (gd - 2 * s_dr) / p_dr));
    r.terms.push_back(make_term("de_cnic_write", "DE CNIC write",
                                "PE-path KV written into the DE buffer and then into the DE GPU, plus "
                                "DE-path KV written into the DE GPU",
                                "(6)-(7)", f("P/D <= (g-s)/(2s)", "P/D <= (g_d B_dw - sB_d)/(2 sB_p)"),
                                TermKind::kUpper, (gd - s_dw) / (2 * p_dw)));
    const double m_de = de.dram_Bps / pe.snic_Bps;  // DE DRAM over PE SNIC
    const double s_de = de.snic_Bps / pe.snic_Bps;  // DE SNIC over PE SNIC
    r.terms.push_back(make_term("de_dram", "DE DRAM",
                                "DE-path KV written once and read twice, PE-path KV written once and read "
                                "once, in the DE node's DRAM (half-duplex)",
                                "(8)", f("P/D <= (M/(sB)-3)/2", "P/D <= (M_d - 3 sB_d)/(2 sB_p)"),
                                TermKind::kUpper, (m_de - 3 * s_de) / 2));
  }

  const double s_pr = pe.snic_Bps / pe.cnic_read_Bps;  // PE SNIC over PE CNIC read
  BoundTerm pe_read = make_term("pe_cnic_read", "PE CNIC read",
                                "PE-path KV read from the PE buffer for H2D and sent from the PE GPU "
                                "to the DE",
                                hbm ? "(H1)" : "(1)", f("2s/g <= 1", "2 sB_p/g_p <= B_pr"),
                                TermKind::kCondition, 2 * s_pr / g);
  pe_read.holds = 2 * s_pr <= g;
  BoundTerm pe_dram = make_term(
      "pe_dram", "PE DRAM", "PE-path KV written by the SNIC and read for H2D in the PE node's DRAM",
      hbm ? "(H6)" : "(text)", f("2sB <= M", "2 sB_p <= M_p"), TermKind::kCondition, 2 / r.m_over_sb);
  pe_dram.holds = 2 * pe.snic_Bps <= pe.dram_Bps;
  if (hbm) {
    const double s_dr = de.snic_Bps / de.cnic_read_Bps;
    BoundTerm de_read =
        make_term("de_cnic_read", "DE CNIC read", "DE-path KV read from the DE GPU and sent to the PE GPU",
                  "(H3)", f("s/g <= 1", "sB_d/g_d <= B_dr"), TermKind::kCondition, s_dr / gd);
    de_read.holds = s_dr <= gd;
    BoundTerm de_dram =
        make_term("de_dram", "DE DRAM",
                  "DE-path KV crossing the DE node's DRAM once, on its way from the SNIC "
                  "to the DE GPU",
                  "(H5)", f("sB <= M", "sB_d <= M_d"), TermKind::kCondition, 1 / (de.dram_Bps / de.snic_Bps));
    de_dram.holds = de.snic_Bps <= de.dram_Bps;
    r.conditions = {pe_read, de_read, de_dram, pe_dram};
  } else {
    r.conditions = {pe_read, pe_dram};
  }

  r.pd_min = lower;
  r.pd_max = kInf;
  for (const BoundTerm& t : r.terms) {
    if (t.kind == TermKind::kUpper) r.pd_max = std::min(r.pd_max, t.value);
  }
  for (BoundTerm& t : r.terms) {
    t.binding = t.value == (t.kind == TermKind::kLower ? r.pd_min : r.pd_max);
  }

  if (!(g > s)) {
    r.reason = fmt::format("g = {} <= s = {:.6g}: the PE CNIC write (2) exceeds B for every P/D", in.g_pe, s);
  } else if (!pe_read.holds) {
    r.reason = fmt::format("2s/g = {:.6g} > 1: the PE CNIC read (1) exceeds B for every P/D (needs s <= g/2)",
                           2 * s_pr / g);
  } else if (!(r.pd_max > 0)) {
    const BoundTerm* worst = nullptr;
    for (const BoundTerm& t : r.terms) {
      if (t.binding && t.kind == TermKind::kUpper) worst = worst ? worst : &t;
    }
    r.reason = fmt::format("upper bound {} = {:.6g} <= 0: no P/D > 0 keeps the {} within capacity",
                           worst->formula, r.pd_max, worst->resource);
  } else if (!(r.pd_min <= r.pd_max)) {
    r.reason = fmt::format("lower bound {:.6g} > upper bound {:.6g}: no P/D satisfies every inequality",
                           r.pd_min, r.pd_max);
  } else {
    // Any other condition (with the DE buffer in DRAM, the PE DRAM's holds whenever (8) admits a P/D).
    for (const BoundTerm& c : r.conditions)
      if (!c.holds) {
        r.reason = fmt::format("{} violated (ratio {:.6g}): the {} exceeds its capacity for every P/D",
                               c.formula, c.value, c.resource);
        break;
      }
  }
  r.feasible = r.reason.empty();
  return r;
}

bool pd_inside(const BottleneckRange& r, double P, double D) {
  if (!r.feasible || !(P > 0) || !(D > 0)) return false;
  const double x = P / D;
  return x >= r.pd_min * (1 - kEndTolerance) && x <= r.pd_max * (1 + kEndTolerance);
}

std::string simple_fraction(double x) {
  if (std::isnan(x)) return "";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  for (int q = 1; q <= 64; ++q) {
    const double n = std::round(x * q);
    if (std::abs(x * q - n) <= 1e-9 * std::max(1.0, std::abs(x * q))) {
      if (std::abs(n) > 1e9) return "";
      const long long ni = static_cast<long long>(n);
      return q == 1 ? fmt::format("{}", ni) : fmt::format("{}/{}", ni, q);
    }
  }
  return "";
}

std::string format_table(const BottleneckRange& r, const LinkLoads* loads) {
  std::string out;
  if (r.in.de_buffer == config::DeBuffer::kHbm) {
    out +=
        "Bottleneck-free P/D range with the DE buffer in HBM (DualPath §4.2's analysis, inequalities "
        "(H1)-(H7) of sim/README.md); P, D = prefill, decode nodes\n";
  } else {
    out += "Bottleneck-free P/D range (DualPath §4.2, inequalities (1)-(9)); P, D = prefill, decode nodes\n";
  }
  if (r.per_role) {
    auto side = [](const char* who, const char* x, int g, const SideBandwidths& b) {
      const std::string cnic = b.cnic_read_Bps == b.cnic_write_Bps
                                   ? fmt::format("B_{0}r = B_{0}w = {1:.6g}", x, gbps(b.cnic_read_Bps))
                                   : fmt::format("B_{}r = {:.6g}, B_{}w = {:.6g}", x, gbps(b.cnic_read_Bps),
                                                 x, gbps(b.cnic_write_Bps));
      return fmt::format(
          "  {} g_{} = {} GPUs/node, {} GB/s per CNIC direction, sB_{} = {:.6g} GB/s per SNIC, M_{} = "
          "{:.6g} GB/s DRAM\n",
          who, x, g, cnic, x, gbps(b.snic_Bps), x, gbps(b.dram_Bps));
    };
    out += side("prefill nodes:", "p", r.sides.g_pe, r.sides.pe) +
           side("decode nodes: ", "d", r.sides.g_de, r.sides.de) + "\n";
  } else {
    out += fmt::format(
        "  g = {} GPUs/node, B = {:.6g} GB/s per CNIC direction, sB = {:.6g} GB/s per SNIC (s = {}), "
        "M = {:.6g} GB/s DRAM (M/(sB) = {})\n\n",
        r.in.g, gbps(r.in.cnic_Bps), gbps(r.in.snic_Bps), short_value(r.s), gbps(r.in.dram_Bps),
        short_value(r.m_over_sb));
  }
  const size_t formula_width = r.per_role ? 33 : 22;
  auto row = [formula_width](const std::string& kind, const std::string& resource, const std::string& ineq,
                             const std::string& formula, const std::string& value, const std::string& flag) {
    std::string line = fmt::format("  {:<9} {:<14} {:<8} {:<{}} {:<22} {}", kind, resource, ineq, formula,
                                   formula_width, value, flag);
    line.erase(line.find_last_not_of(' ') + 1);
    return line + "\n";
  };
  out += row("bound", "resource", "ineq.", "formula", "value", "");
  for (const BoundTerm& t : r.terms) {
    out += row(kind_name(t.kind), t.resource, t.inequality, t.formula, fraction_and_decimal(t.value),
               t.binding ? "binding" : "");
  }
  for (const BoundTerm& t : r.conditions) {
    // A condition's value is its left-hand side over the right-hand side (load / capacity).
    out += row(kind_name(t.kind), t.resource, t.inequality, t.formula,
               "ratio " + fraction_and_decimal(t.value), t.holds ? "holds" : "VIOLATED");
  }
  out += "\n  what each resource carries (per CNIC direction or per node DRAM, hit KV only):\n";
  for (const auto* list : {&r.terms, &r.conditions}) {
    for (const BoundTerm& t : *list) out += fmt::format("    {:<14} {}\n", t.resource, t.label);
  }
  out += "\n";
  if (r.feasible) {
    out += fmt::format("  {} <= P/D <= {}   ({:.6g} <= P/D <= {:.6g})\n", short_value(r.pd_min),
                       short_value(r.pd_max), r.pd_min, r.pd_max);
  } else {
    out += "  empty range: " + r.reason + "\n";
  }
  if (loads != nullptr) {
    const LinkLoads& l = *loads;
    out += fmt::format("\nIdeal loads at P = {}, D = {} (P/D = {}), every SNIC saturated; GB/s\n",
                       short_value(l.p), short_value(l.d), fraction_and_decimal(l.p / l.d));
    out += fmt::format(r.per_role
                           ? "  T_p = sB_p/(D g_p g_d) = {:.6g}, T_c = sB_d/(P g_p g_d) = {:.6g} per "
                             "PE-DE GPU pair\n"
                           : "  T_p = sB/(D g^2) = {:.6g}, T_c = sB/(P g^2) = {:.6g} per PE-DE GPU pair\n",
                       gbps(l.t_p_Bps), gbps(l.t_c_Bps));
    out += fmt::format("  {:<30} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "link", "PE path", "DE path", "total",
                       "capacity", "util.");
    const SideBandwidths& pe = l.in.pe;
    const SideBandwidths& de = l.in.de;
    const std::tuple<const char*, const Load*, double> rows[] = {
        {"PE CNIC read (per GPU)", &l.pe_cnic_read, pe.cnic_read_Bps},
        {"PE CNIC write (per GPU)", &l.pe_cnic_write, pe.cnic_write_Bps},
        {"DE CNIC read (per GPU)", &l.de_cnic_read, de.cnic_read_Bps},
        {"DE CNIC write (per GPU)", &l.de_cnic_write, de.cnic_write_Bps},
        {"PE DRAM (per node, r+w)", &l.pe_dram, pe.dram_Bps},
        {"DE DRAM (per node, r+w)", &l.de_dram, de.dram_Bps},
        {"PE SNIC in (per node)", &l.pe_snic, pe.snic_Bps},
        {"DE SNIC in (per node)", &l.de_snic, de.snic_Bps}};
    for (const auto& [name, load, cap] : rows) {
      const double u = load->total_Bps / cap;
      out += fmt::format("  {:<30} {:>10.6g} {:>10.6g} {:>10.6g} {:>10.6g} {:>6.1f}%{}\n", name,
                         gbps(load->pe_path_Bps), gbps(load->de_path_Bps), gbps(load->total_Bps), gbps(cap),
                         100 * u, u > 1 + kEndTolerance ? "  OVER" : "");
    }
    out += fmt::format("  P/D = {} is {} the bottleneck-free range\n", short_value(l.p / l.d),
                       pd_inside(r, l.p, l.d) ? "inside" : "OUTSIDE");
  }
  return out;
}

nlohmann::json to_json(const LinkLoads& l) {
  const SideBandwidths& pe = l.in.pe;
  const SideBandwidths& de = l.in.de;
  return {{"P", l.p},
          {"D", l.d},
          {"de_buffer", config::name(l.de_buffer)},
          {"pd", l.p / l.d},
          {"t_p_Bps", l.t_p_Bps},
          {"t_c_Bps", l.t_c_Bps},
          {"pe_cnic_read", load_json(l.pe_cnic_read, pe.cnic_read_Bps)},
          {"pe_cnic_write", load_json(l.pe_cnic_write, pe.cnic_write_Bps)},
          {"de_cnic_read", load_json(l.de_cnic_read, de.cnic_read_Bps)},
          {"de_cnic_write", load_json(l.de_cnic_write, de.cnic_write_Bps)},
          {"pe_dram", load_json(l.pe_dram, pe.dram_Bps)},
          {"de_dram", load_json(l.de_dram, de.dram_Bps)},
          {"pe_snic", load_json(l.pe_snic, pe.snic_Bps)},
          {"de_snic", load_json(l.de_snic, de.snic_Bps)},
          {"max_utilisation", max_utilisation(l)}};
}

nlohmann::json to_json(const BottleneckRange& r, const LinkLoads* loads) {
  nlohmann::json j;
  j["pd_min"] = number_or_null(r.pd_min);
  j["pd_max"] = number_or_null(r.pd_max);
  j["pd_min_fraction"] = simple_fraction(r.pd_min);
  j["pd_max_fraction"] = simple_fraction(r.pd_max);
  j["feasible"] = r.feasible;
  j["reason"] = r.reason;
  j["inputs"] = {{"g", r.in.g},
                 {"cnic_bw_Bps", r.in.cnic_Bps},
                 {"snic_bw_Bps", r.in.snic_Bps},
                 {"dram_bw_Bps", r.in.dram_Bps},
                 {"s", r.s},
                 {"m_over_sb", r.m_over_sb},
                 {"de_buffer", config::name(r.in.de_buffer)}};
  if (r.per_role) {  // each side's values (the keys above are the prefill side's)
    auto side = [](int g, const SideBandwidths& b) {
      return nlohmann::json{{"g", g},
                            {"cnic_read_bw_Bps", b.cnic_read_Bps},
                            {"cnic_write_bw_Bps", b.cnic_write_Bps},
                            {"snic_bw_Bps", b.snic_Bps},
                            {"dram_bw_Bps", b.dram_Bps}};
    };
    j["inputs"]["prefill"] = side(r.sides.g_pe, r.sides.pe);
    j["inputs"]["decode"] = side(r.sides.g_de, r.sides.de);
  }
  j["terms"] = nlohmann::json::object();
  for (const BoundTerm& t : r.terms) j["terms"][t.key] = term_json(t);
  j["conditions"] = nlohmann::json::object();
  for (const BoundTerm& t : r.conditions) j["conditions"][t.key] = term_json(t);
  if (loads != nullptr) {
    j["point"] = to_json(*loads);
    j["point"]["inside"] = pd_inside(r, loads->p, loads->d);
  }
  return j;
}

}  // namespace sim::cost
