// LoadBook: the load that the policies see (policy::ClusterView): requests and tokens per engine, free DE
// HBM, tokens queued for storage reads per node. Kept current as loads change, never rebuilt; the one
// place where a request's load on an engine is counted (DualPath §6.1: seq_e and tok_e).
//   PE: a request counts from its placement to the end of its prefill, for hit + miss tokens;
//   DE: from its placement to the end of its turn, for hit + miss + gen tokens (its whole context).
#pragma once

#include <vector>

#include "sim/engine/request.h"
#include "sim/policy/view.h"

namespace sim::engine {

class LoadBook {
 public:
  // One entry per PE (`pe_nodes[i]` = PE i's node) and per DE, and per node for the read queues.
  // REQUIRES: hbm_per_de_bytes >= 0.
  LoadBook(const std::vector<int>& pe_nodes, const std::vector<int>& de_nodes, int nodes,
           double hbm_per_de_bytes);

  void charge_pe(int pe, const Request& r) { add(view_.pes[pe], 1, r.hit + r.miss); }
  void discharge_pe(int pe, const Request& r) { add(view_.pes[pe], -1, -(r.hit + r.miss)); }
  void charge_de(int de, const Request& r) { add(view_.des[de], 1, r.hit + r.miss + r.gen); }
  void discharge_de(int de, const Request& r) { add(view_.des[de], -1, -(r.hit + r.miss + r.gen)); }
  // Storage reads of `tokens` queued on (positive) or finished at (negative) a node.
  void read_queued(int node, double tokens) { view_.read_q[node] += tokens; }

  // DE HBM not yet promised (HbmPool keeps it; a whole-DE claim may leave it below 0 for a while).
  double& free_hbm(int de) { return view_.des[de].free_hbm; }
  double free_hbm(int de) const { return view_.des[de].free_hbm; }
  int de_seq(int de) const { return view_.des[de].seq; }
  int pe_node(int pe) const { return view_.pes[pe].node; }
  // Requests counted on the PEs (pe = true) or the DEs of `node`.
  int node_requests(int node, bool pe) const {
    int n = 0;
    for (const auto& e : pe ? view_.pes : view_.des)
      if (e.node == node) n += e.seq;
    return n;
  }
  int de_node(int de) const { return view_.des[de].node; }

  // The policies' view at simulated time `now`.
  const policy::ClusterView& view(double now) {
    view_.now = now;
    return view_;
  }
  const policy::ClusterView& view() const { return view_; }

 private:
  static void add(policy::EngineLoad& e, int seq, double tok) {
    e.seq += seq;
    e.tok += tok;
  }
  policy::ClusterView view_;
};

}  // namespace sim::engine
