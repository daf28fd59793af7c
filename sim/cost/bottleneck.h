// Bottleneck-free P/D analysis of DualPath §4.2 (PAPER.md §4.5), generalised to any g, s, B, M. Pure.
//
// Symbols: P, D = prefill and decode NODES (doubles: only the ratio P/D matters for the bounds); g = GPUs
// per node, each with one CNIC of bandwidth B per direction; SNIC bandwidth s·B per direction (s = sB/B
// need not be an integer); M = DRAM bandwidth per node, half-duplex (reads + writes share it).
// Assumptions (the paper's): every SNIC is saturated by hit-KV storage reads, the storage bandwidth is
// shared evenly by all PE–DE GPU pairs, scheduling is balanced, the compute network does not congest.
// Only hit-KV traffic counts (miss KV, decode persistence and collectives are ignored). The SNIC
// line rate s·B is used as is: the engine's storage client (EngineSpec::storage_efficiency,
// storage_request_overhead_s) and the node's storage cap are NOT applied.
//
// Per (PE GPU, DE GPU) pair, bytes/s:  T_p = sB / (D g²) (PE read path),  T_c = sB / (P g²) (DE path).
// A PE GPU pairs with D·g DE GPUs; a DE GPU with P·g PE GPUs. "read"/"write" of a CNIC = the NIC reading
// from / writing to its PCIe side (loopback H2D/D2H counts on both, as in the paper).
//   (1)     PE CNIC read  = 2 T_p D g            = 2sB/g                 <= B  <=> 2s/g <= 1
//   (2)-(3) PE CNIC write = (T_p + T_c) D g      = sB/g (1 + D/P)       <= B  <=> P/D >= s/(g-s)
//   (4)-(5) DE CNIC read  = (T_p + 2 T_c) P g    = sB/g (P/D + 2)       <= B  <=> P/D <= (g-2s)/s
//   (6)-(7) DE CNIC write = (2 T_p + T_c) P g    = sB/g (2 P/D + 1)     <= B  <=> P/D <= (g-s)/(2s)
//   (8)     DE DRAM       = (3 + 2 P/D) sB (DE-path data: 1 write + 2 reads; PE-path: 1 write + 1 read)
//                                                                       <= M  <=> P/D <= (M/(sB) - 3)/2
//   (text)  PE DRAM       = 2 sB (SNIC write + H2D read)                <= M  <=> 2sB <= M
//   (9)     s/(g-s) <= P/D <= min{(g-2s)/s, (g-s)/(2s), (M/(sB)-3)/2}
// Paper hardware g=8, s=1, B=50 GB/s, M=500 GB/s: 1/7 <= P/D <= 7/2 (DE CNIC write and DE DRAM bind).
// The paper says (1) holds "since s <= g"; it really needs s <= g/2. When s >= g/2 the DE CNIC read
// term is <= 0, so the range is empty anyway; likewise M/(sB) <= 3 empties it via (8) and implies
// nothing about PE DRAM, which holds whenever (8) admits any P/D > 0 (M > 3sB > 2sB).
//
// With the DE buffer in HBM (cluster.de_buffer = hbm; derivation in sim/README.md, "The DE buffer in DRAM
// or in HBM"): DE-side reads go storage -> DE DRAM (once) -> DE CNIC write -> DE GPU; the DE-path layer
// loads DE GPU -> DE CNIC read -> PE; the PE's KV PE GPU -> DE CNIC write -> DE GPU; no H2D on the DE.
//   (H1)    PE CNIC read  = 2 T_p D g            = 2sB/g                 <= B  <=> 2s/g <= 1
//   (H2)    PE CNIC write = (T_p + T_c) D g      = sB/g (1 + D/P)       <= B  <=> P/D >= s/(g-s)
//   (H3)    DE CNIC read  = T_c P g              = sB/g                  <= B  <=> s/g <= 1
//   (H4)    DE CNIC write = (T_p + T_c) P g      = sB/g (P/D + 1)       <= B  <=> P/D <= (g-s)/s
//   (H5)    DE DRAM       = sB (the DE's own storage reads, once)        <= M  <=> sB <= M
//   (H6)    PE DRAM       = 2 sB (as (text) above)                       <= M  <=> 2sB <= M
//   (H7)    s/(g-s) <= P/D <= (g-s)/s, non-empty iff s <= g/2, i.e. iff (H1) holds
// Paper hardware: 1/7 <= P/D <= 7 (PE CNIC write below, DE CNIC write above; the DRAMs at 10% and 20%).
//
// Per role (a hardware file per role, or live bandwidths; sim/README.md, "per role"): PE nodes g_p GPUs,
// CNIC B_pr/B_pw (read/write), SNIC sB_p, DRAM M_p; DE nodes g_d, B_dr/B_dw, sB_d, M_d. Per pair
// T_p = sB_p/(D g_p g_d), T_c = sB_d/(P g_p g_d); a PE GPU pairs with D g_d DE GPUs, a DE GPU with P g_p PE
// GPUs, so each PE-side term takes g_p and each DE-side term g_d (the DRAM terms take neither):
//   (1)     2 sB_p/g_p <= B_pr                  (2)-(3) P/D >= sB_d/(g_p B_pw - sB_p)
//   (4)-(5) P/D <= (g_d B_dr - 2 sB_d)/sB_p     (6)-(7) P/D <= (g_d B_dw - sB_d)/(2 sB_p)
//   (8)     P/D <= (M_d - 3 sB_d)/(2 sB_p)      (text)  2 sB_p <= M_p
//   hbm: (H3) sB_d/g_d <= B_dr, (H4) P/D <= (g_d B_dw - sB_d)/sB_p, (H5) sB_d <= M_d; the rest as above.
// With one file (g_p = g_d, equal bandwidths) these are the inequalities above, computed bit for bit alike.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/config/de_buffer.h"
#include "sim/config/hardware.h"
#include "sim/core/status.h"

namespace sim::cost {

// A bandwidth (or a P, D) the analysis can divide by: finite and above zero.
inline bool positive_finite(double x) {
  return std::isfinite(x) && x > 0;
}

struct BottleneckInputs {
  int g = 8;                                             // GPUs (= CNICs) per node
  double cnic_Bps = 50e9;                                // B, per CNIC per direction
  double snic_Bps = 50e9;                                // s·B, per node per direction
  double dram_Bps = 500e9;                               // M, per node, reads + writes
  config::DeBuffer de_buffer = config::DeBuffer::kDram;  // inequalities (1)-(9), or (H1)-(H7) for hbm
};
// g, B, sB, M of a hardware file (line rates; storage efficiency/cap are ignored, see above), and the DE
// buffer's variant.
BottleneckInputs bottleneck_inputs(const config::HardwareSpec& hw,
                                   config::DeBuffer de_buffer = config::DeBuffer::kDram);

// One side's bandwidths (the PE nodes' or the DE nodes'), bytes/s: the per-side generalisation of the
// analysis (sim/cost/live_range.h states its inequalities).
struct SideBandwidths {
  double cnic_read_Bps = 50e9;   // per CNIC, the NIC reading from its PCIe side
  double cnic_write_Bps = 50e9;  // per CNIC, the NIC writing to its PCIe side
  double snic_Bps = 50e9;        // per node, storage -> node
  double dram_Bps = 500e9;       // per node, reads + writes
};
struct SidedInputs {
  int g_pe = 8;  // GPUs (= CNICs) per PE node
  int g_de = 8;  // per DE node
  SideBandwidths pe, de;
  config::DeBuffer de_buffer = config::DeBuffer::kDram;
  // One g and equal bandwidths on both sides: the homogeneous analysis.
  bool homogeneous() const;
};
// Both sides with g, B (read and write), sB and M of `in`.
SidedInputs sided(const BottleneckInputs& in);
// The prefill nodes' g, B, sB, M from `prefill`, the decode nodes' from `decode` (line rates, as above).
SidedInputs sided_inputs(const config::HardwareSpec& prefill, const config::HardwareSpec& decode,
                         config::DeBuffer de_buffer = config::DeBuffer::kDram);

// One load, split by the read path whose bytes make it up; bytes/s.
struct Load {
  double pe_path_Bps = 0;  // T_p terms: KV read from storage by PE nodes' SNICs
  double de_path_Bps = 0;  // T_c terms: KV read from storage by DE nodes' SNICs
  double total_Bps = 0;    // pe_path_Bps + de_path_Bps
};

// Steady-state loads with every SNIC saturated and reads split ideally (the paper's assumption).
// CNIC loads are per CNIC (= per GPU) per direction; DRAM loads per node, reads + writes summed; SNIC
// loads per node in the storage -> node direction (the other direction carries nothing here).
// The DE-side terms differ with the DE buffer in HBM (hbm: in brackets).
struct LinkLoads {
  double p = 0, d = 0;  // the P, D they were computed for
  config::DeBuffer de_buffer = config::DeBuffer::kDram;
  double t_p_Bps = 0;  // T_p = sB/(D g²), per PE–DE GPU pair
  double t_c_Bps = 0;  // T_c = sB/(P g²), per PE–DE GPU pair
  Load pe_cnic_read;   // (1) 2 T_p D g: PE path H2D read from DRAM (3) + GPU -> DE send (5)
  Load pe_cnic_write;  // (2) T_p D g (PE path 4: H2D into the GPU) + T_c D g (DE path 5: RDMA in)
  Load de_cnic_read;   // (4) T_p P g (PE path 8: DE DRAM -> GPU) + 2 T_c P g (DE paths 3, 6)
                       // [hbm: T_c P g, the DE-path loads DE GPU -> PE]
  Load de_cnic_write;  // (6) 2 T_p P g (PE paths 7, 9) + T_c P g (DE path 7: H2D into DE GPU)
                       // [hbm: T_p P g (PE path push) + T_c P g (storage -> DE GPU)]
  Load pe_dram;        // 2 sB, all PE path (SNIC write + H2D read)
  Load de_dram;        // (8) 2 sB P/D (PE path: write + read) + 3 sB (DE path: write + 2 reads)
                       // [hbm: sB, the DE-side storage reads' bounce]
  Load pe_snic;        // sB (PE path), storage -> PE node
  Load de_snic;        // sB (DE path), storage -> DE node
  SidedInputs in;      // g and the capacities of each side (B, sB, M of both when homogeneous)
};

// REQUIRES g >= 1 and B, sB, M, P, D > 0 and finite (a violation is a caller bug: SIM_CHECK aborts).
LinkLoads ideal_link_loads(int g, double B, double sB, double M, double P, double D,
                           config::DeBuffer de_buffer = config::DeBuffer::kDram);
// Per side (the header's per-role loads; T_p = sB_p/(D g_p g_d), T_c = sB_d/(P g_p g_d)); the same bits as
// the overload above when in.homogeneous(). REQUIRES as above, for both sides.
LinkLoads ideal_link_loads(const SidedInputs& in, double P, double D);

// Largest load/capacity ratio over all CNIC directions and both DRAMs (SNICs are at 1 by construction).
double max_utilisation(const LinkLoads& l);

enum class TermKind { kLower, kUpper, kCondition };

// One inequality of (1)-(9) (or (H1)-(H7)). For kLower/kUpper `value` is the bound on P/D (+inf when no P/D
// satisfies a lower bound, i.e. g <= s); for kCondition `value` is load/capacity, independent of P/D.
struct BoundTerm {
  std::string key;         // JSON key, e.g. "de_cnic_write"
  std::string resource;    // the resource it protects, e.g. "DE CNIC write"
  std::string label;       // one human sentence on what crosses that resource
  std::string inequality;  // paper numbering, e.g. "(6)-(7)"; "(text)" when only stated in prose; "(H4)"
  std::string
      formula;  // e.g. "P/D <= (g-s)/(2s)" or "2s/g <= 1"; per role "P/D <= (g_d B_dw - sB_d)/(2 sB_p)"
  TermKind kind = TermKind::kUpper;
  double value = 0;
  bool binding = false;  // sets pd_min or pd_max (ties: all of them)
  bool holds = true;     // conditions only
};

struct BottleneckRange {
  BottleneckInputs in;
  SidedInputs sides;      // both sides' inputs (each `in`'s for the homogeneous overload)
  bool per_role = false;  // !sides.homogeneous(): formulas, table and JSON name each side's values
  double s = 0;           // sB / B
  double m_over_sb = 0;   // M / (sB)
  double pd_min = 0;      // (3); +inf when g <= s
  double pd_max = 0;      // min of (5), (7), (8) (hbm: (H4)); may be <= 0
  bool feasible = false;  // pd_min <= pd_max, pd_max > 0 and every condition holds
  std::string reason;     // why the range is empty; "" when feasible
  // dram: pe_cnic_write, de_cnic_read, de_cnic_write, de_dram; hbm: pe_cnic_write, de_cnic_write.
  std::vector<BoundTerm> terms;
  // dram: pe_cnic_read (1), pe_dram (text); hbm: pe_cnic_read, de_cnic_read, de_dram, pe_dram.
  std::vector<BoundTerm> conditions;
};

// Inequalities (1)-(9), or (H1)-(H7) with in.de_buffer = hbm. Errors (no exceptions) when g < 1 or B, sB,
// M are not positive and finite.
StatusOr<BottleneckRange> bottleneck_range(const BottleneckInputs& in);
// The same inequalities with each load against its own side's capacity and g (the per-role form above;
// sim/cost/live_range.h); the homogeneous overload above is this one on sided(in), so both give the same
// bits. `in` of the result holds the PE side's g, CNIC write, SNIC and DRAM and the DE buffer; `s` = PE SNIC
// / PE CNIC write, `m_over_sb` = PE DRAM / PE SNIC. `formula` strings are the homogeneous forms when
// in.homogeneous(), else the per-role ones. Errors when a g < 1 or a bandwidth is not positive and finite
// (naming it, e.g. "de.cnic_write_Bps").
StatusOr<BottleneckRange> bottleneck_range(const SidedInputs& in);

// Whether P/D lies in [pd_min, pd_max] (relative tolerance 1e-12 at the ends) and the range is feasible.
bool pd_inside(const BottleneckRange& r, double P, double D);

// "1/7", "7/2", "6", "-1/2" when |x| = n/q with q <= 64 (relative tolerance 1e-9); "inf"/"-inf" for
// infinities; "" otherwise.
std::string simple_fraction(double x);

// Human-readable report: inputs, one row per term and condition, the range line "1/7 <= P/D <= 7/2"
// (or why it is empty); with `loads` also the per-link loads at that P, D and whether it is inside.
std::string format_table(const BottleneckRange& r, const LinkLoads* loads = nullptr);

// {"pd_min", "pd_max" (null if infinite), "pd_min_fraction", "pd_max_fraction", "feasible", "reason",
//  "inputs": {..., "de_buffer"}, "terms": {key: {...}}, "conditions": {key: {...}}}; with `loads` also
//  "point".
nlohmann::json to_json(const BottleneckRange& r, const LinkLoads* loads = nullptr);
nlohmann::json to_json(const LinkLoads& l);

}  // namespace sim::cost
