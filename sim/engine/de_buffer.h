// The DE side of a request's KV, between its storage read (or its prefill) and its decode: the DE buffer,
// in the decode node's DRAM or in the DE GPU's HBM (cluster.de_buffer, config/de_buffer.h). One place
// says what that space is, when it is taken and where the KV sits:
//   dram  the DE node's DRAM buffer (BufferPool): the request's whole prompt KV, taken before the first
//         byte lands there (its first DE-side read starts, or its PE takes it into a batch, whose pushes
//         go there), released by the DE's loader after the H2D copy at the decode start;
//   hbm   its DE GPU's HBM (HbmPool): its whole decode need, hit + miss + gen tokens, taken at the same
//         two moments (unless a queued scheduler promised it when it chose the DE) and held until the turn
//         ends: the decode runs in it, with no H2D. A request on the free transport (the Oracle) lands no
//         byte, holds nothing early, and gets its HBM from the loader when it joins, as with dram.
// Waiting for it: a read lane keeps its FIFO head (reader_service.h: with hbm, one FIFO per DE GPU), a PE
// skips the request and registers with the DE node (BufferPool::wait_for_room); a refusal is noted on the
// DE (HbmPool::refuse), and HBM freed there at a turn's end wakes both (de_hbm_freed). Both
// variants keep BufferPool's order, PE-side buffer before DE-side space, and whatever holds DE-side space
// needs no more of it to finish (its reads, prefill and decode), so a full DE side delays but never
// deadlocks.
#pragma once

#include "sim/engine/context.h"

namespace sim::engine {

inline bool de_buffer_hbm(const EngineContext& c) {
  return c.sc.cluster.de_buffer == config::DeBuffer::kHbm;
}
// Whether the request's DE-side space is held, or could be taken now (hbm: a "no" is noted on the DE, so
// that its next release wakes the caller, who waits).
bool de_space_fits(EngineContext& c, const Request& r);
// Takes the request's DE-side space at time now() (nothing when it is held already); false when it does
// not fit (nothing taken).
bool take_de_space(EngineContext& c, Request& r);
// The host that the request's DE-side KV is in: the DRAM buffer of DE GPU `gpu` on `node` (dram), or the
// GPU itself (hbm).
simgrid::s4u::Host* de_side_host(const EngineContext& c, int node, int gpu);
// HBM was freed on DE `de` (hbm): if a request was refused HBM there, its node's read lanes and the PEs
// waiting for DE space there may go on.
void de_hbm_freed(EngineContext& c, int de);

}  // namespace sim::engine
