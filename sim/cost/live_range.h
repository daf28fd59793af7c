// The bottleneck-free range at the live node counts and bandwidths, and the best share of hit KV to read
// through the DE nodes there. Pure. The analysis of bottleneck.h, with each side's g and bandwidths its own:
// PE nodes g_p GPUs, B_pr, B_pw (CNIC read, write), sB_pe (SNIC), M_pe (DRAM); DE nodes g_d, B_dr, B_dw,
// sB_de, M_de (g_p != g_d only with a hardware file per role).
//
// Per (PE GPU, DE GPU) pair, every SNIC saturated: T_p = sB_pe/(D g_p g_d) (PE path), T_c = sB_de/(P g_p g_d)
// (DE path); a PE GPU pairs with D·g_d DE GPUs, a DE GPU with P·g_p PE GPUs. Each load against its own side:
//   (1)     PE CNIC read  = 2 T_p D g_d       = 2 sB_pe/g_p                   <= B_pr
//   (2)-(3) PE CNIC write = (T_p + T_c) D g_d = sB_pe/g_p + sB_de D/(P g_p)   <= B_pw
//                                             <=> P/D >= sB_de / (g_p B_pw - sB_pe)
//   (4)-(5) DE CNIC read  = (T_p + 2 T_c) P g_p = sB_pe P/(D g_d) + 2 sB_de/g_d <= B_dr
//                                             <=> P/D <= (g_d B_dr - 2 sB_de) / sB_pe
//   (6)-(7) DE CNIC write = (2 T_p + T_c) P g_p = 2 sB_pe P/(D g_d) + sB_de/g_d <= B_dw
//                                             <=> P/D <= (g_d B_dw - sB_de) / (2 sB_pe)
//   (8)     DE DRAM       = 2 sB_pe P/D + 3 sB_de                         <= M_de
//                                             <=> P/D <= (M_de - 3 sB_de) / (2 sB_pe)
//   (text)  PE DRAM       = 2 sB_pe                                       <= M_pe
// DE buffer in HBM: (H1) = (1), (H2) = (2)-(3), (H3) DE CNIC read = sB_de/g_d <= B_dr, (H4) DE CNIC write =
// sB_pe P/(D g_d) + sB_de/g_d <= B_dw <=> P/D <= (g_d B_dw - sB_de)/sB_pe, (H5) DE DRAM = sB_de <= M_de, (H6)
// = (text). With equal sides these are bottleneck.h's, and bottleneck_range computes both with one code.
//
// The best DE-path share f* in [0, 1]: the fraction of hit bytes read through DE nodes' SNICs that
// maximises the total hit-KV read rate R (bytes/s, whole cluster) that no resource caps. At share f each
// load is linear in R (per CNIC direction per GPU, per node for SNIC and DRAM; hbm in brackets):
//   PE SNIC (1-f)R/P <= sB_pe          DE SNIC fR/D <= sB_de
//   PE CNIC read 2(1-f)R/(P g_p) <= B_pr  PE CNIC write R/(P g_p) <= B_pw
//   DE CNIC read (1+f)R/(D g_d) <= B_dr [fR/(D g_d)]   DE CNIC write (2-f)R/(D g_d) <= B_dw [R/(D g_d)]
//   PE DRAM 2(1-f)R/P <= M_pe          DE DRAM (2+f)R/D <= M_de [fR/D]
// so 1/R(f) = max_i u_i(f) with u_i linear in f: convex and piecewise linear, minimised at f = 0, 1 or
// where two of the u_i cross (computed exactly over those candidates). The shares that reach the best R
// form an interval [lo, hi]; f* is the point of it nearest the SNIC-proportional share
// f_prop = D sB_de / (P sB_pe + D sB_de), which loads both sides' SNICs to the same fraction of their line
// rate. Inside the range lo = hi = f_prop (every SNIC saturated, R = P sB_pe + D sB_de). Below the lower
// bound the PE CNIC write's load R/(P g_p) does not depend on f: every hit byte enters a PE GPU once,
// whichever side read it, so no share relieves it; [lo, hi] is the band of shares that still reach its
// cap (beyond hi the DE SNICs, below lo the PE SNICs would cap R lower). Above the upper bound the DE CNIC
// write falls with f (the PE path writes each byte into the DE twice, the DE path once) while the DE DRAM
// and the DE CNIC read rise with f: f* balances them.
#pragma once

#include <string>
#include <vector>

#include "sim/cost/bottleneck.h"

namespace sim::cost {

struct DeShare {
  double de_share = 0;      // f*
  double lo = 0, hi = 0;    // the shares that reach rate_Bps (lo <= f* <= hi)
  double rate_Bps = 0;      // R at f*: the hit-KV read rate the analysis admits, whole cluster
  double proportional = 0;  // f_prop
  // Keys of the resources at capacity at f* ("pe_snic", "de_snic", "pe_cnic_read", "pe_cnic_write",
  // "de_cnic_read", "de_cnic_write", "pe_dram", "de_dram"), in that order.
  std::vector<std::string> binding;
};

// REQUIRES P, D > 0 and finite, g >= 1, every bandwidth > 0 and finite (SIM_CHECK aborts otherwise).
DeShare best_de_share(const SidedInputs& in, double P, double D);

// The live state at P prefill and D decode nodes.
struct LivePoint {
  double p = 0, d = 0;
  BottleneckRange range;  // from the live bandwidths (no P, D in it)
  bool inside = false;    // pd_inside(range, P, D); false when P or D is 0
  bool valid = false;     // P, D > 0 and the bandwidths valid: share is computed
  DeShare share;
};

// REQUIRES P, D >= 0; with P or D zero (or a bandwidth not positive) only p, d (and range, when the
// bandwidths are valid) are set.
LivePoint live_point(const SidedInputs& in, double P, double D);

}  // namespace sim::cost
