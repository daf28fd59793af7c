// HbmPool: the HBM for KV of every DE GPU (cost::hbm_kv_bytes_per_gpu with the decode role's weight shards).
// A request's decode needs its whole context's KV in HBM: hit + miss + gen tokens. HBM is either promised
// when a queued scheduler picks the DE (DualPath §6.1 phase 2), or allocated (immediate schedulers): by
// the DE's loader when the request's prompt KV is ready in the DRAM buffer (cluster.de_buffer = dram), or
// before the first byte of its KV lands in the DE's HBM (hbm: engine/de_buffer.h). The free bytes are the
// policies' free_hbm (LoadBook), kept here. Waiting for HBM is the loader's (decode_service.cpp), or, with
// the DE buffer in HBM, the read lanes' and the PEs' (de_buffer.h).
//
// The pool also follows the HBM held by requests that have not joined their decode batch yet (promised
// or allocated, while they read, prefill or copy in): per DE and summed over DEs, with its peaks. That is
// the HBM cost of holding KV in HBM before the decode (results: summary.de_hbm).
#pragma once

#include <vector>

#include "sim/engine/load_book.h"
#include "sim/engine/request.h"

namespace sim::resources {

class HbmPool {
 public:
  // `book` holds the free bytes. REQUIRES: per_de_bytes >= 0; `book` outlives the pool.
  HbmPool(engine::LoadBook& book, int des, double per_de_bytes, double kv_bytes_per_token);

  // HBM for KV of `de`, and at the start (every DE alike: units of one size).
  double per_de(int de) const { return per_de_[de]; }
  double per_de() const { return initial_; }
  // The DE's HBM for KV becomes `bytes` (its unit's EP group changed size): its free bytes move by the
  // difference; a DE left holding more than that takes nothing until enough is released.
  void set_per_de(int de, double bytes);
  double free(int de) const { return book_.free_hbm(de); }
  // HBM a request's decode needs: its whole context's KV.
  double need(const engine::Request& r) const { return (r.hit + r.miss + r.gen) * kv_token_; }
  // Promises HBM on `de` at time `now` (queued schedulers): need(r), capped at what is free; or, for a
  // request larger than a whole DE (whole = true), the DE's whole HBM, leaving a debt (free below 0)
  // that the DE's earlier requests pay as they end, so nothing else is placed there meanwhile.
  void promise(engine::Request& r, int de, bool whole, double now);
  bool whole_claimed(int de) const { return whole_claimed_[de]; }
  // Immediate schedulers: whether the loader may allocate for `r` now (FIFO; a request larger than the
  // whole HBM runs alone rather than deadlock), and the allocation.
  bool can_allocate(const engine::Request& r, int de) const;
  void allocate(engine::Request& r, int de, double now);
  // With the DE buffer in HBM a request is refused HBM on `de` before its join and waits (a read lane, a
  // PE: engine/de_buffer.h); take_refused says whether that happened since it was last asked, and clears it,
  // so that a release wakes waiters only where there are some.
  void refuse(int de) { refused_[de] = 1; }
  bool take_refused(int de) {
    const bool was = refused_[de] != 0;
    refused_[de] = 0;
    return was;
  }
  // The request joins its DE's decode batch: its HBM no longer counts as held before the join.
  void joined(const engine::Request& r, int de);
  // Returns what `r` holds or was promised (at the end of its turn).
  void release(engine::Request& r, int de);
  // HBM held or promised over all DEs: 0 after a complete run; anything else is a leak.
  double held() const;
  // HBM held or promised by requests that have not joined their decode batch: the largest sum over all
  // DEs at any time, and the largest on one DE.
  double peak_before_join() const { return peak_staged_total_; }
  double peak_before_join_one_de() const { return peak_staged_one_; }

 private:
  void stage(int de, double bytes);
  engine::LoadBook& book_;
  std::vector<double> per_de_;
  double initial_;
  double kv_token_;
  std::vector<char> whole_claimed_;
  std::vector<char> refused_;   // per DE: a request was refused HBM there and waits
  std::vector<double> staged_;  // per DE: held by requests not yet in the decode batch
  double staged_total_ = 0, peak_staged_total_ = 0, peak_staged_one_ = 0;
};

}  // namespace sim::resources
