// Request: one agent turn in flight, as plain data. Requests live in the RequestStore; everything else
// holds a RequestId. Times are simulated seconds (-1 = not reached); tokens are counts.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sim::engine {

using RequestId = uint32_t;

// Where a request's KV travels (chosen with its read side): on the platform's links, or on the Oracle's
// free transport, whose transfers carry no byte, take no time and hold no buffer (the upper bound).
enum class KvTransport { kLinks, kFree };

struct Request {
  int agent = 0;
  int turn = 0;
  double hit = 0;   // earlier context, read from storage
  double miss = 0;  // appended tokens, prefilled (and the context storage no longer held)
  // slo.mode = relative: the turn's unloaded TTFT (cost/unloaded.h) at its first issue (0 otherwise).
  float unloaded_ttft = 0;
  double recomputed = 0;   // of `miss`: context tokens evicted from storage, computed again
  double gen = 0;          // tokens to generate (the first by the prefill)
  int pe = 0;              // prefill engine index
  int de = 0;              // decode engine index
  double pe_fraction = 1;  // share of `hit` read through the PE node (its first tokens; the DE node the rest)
  // Of `hit`: the prefix in the DRAM tier of the PE's node and of the DE's node (cache.dram_bytes), used in
  // place of a storage read on the side that covers it (storage_tokens()).
  double pe_cached = 0, de_cached = 0;
  KvTransport kv_transport = KvTransport::kLinks;
  int reads_pending = 0;
  // A read split over both sides: the DE side's bytes, queued on the DE node only once the PE side has its
  // buffer space (reader_service.cpp: buffers are always taken PE side first, so no cycle of waits).
  double deferred_de_bytes = 0;
  double prefilled = 0;     // miss tokens computed so far (chunked prefill)
  bool hit_pushed = false;  // PE-path hit KV already sent to the DE buffer
  double join_step = 0;  // its decode group's step count when it joined the batch: one token per step since
  double persisted_tokens = 0;  // generated tokens whose KV was handed to persistence
  double hbm_bytes = 0;         // DE HBM held
  // A queued scheduler's request larger than a whole DE's HBM: it claimed the DE's whole HBM and decodes
  // alone once the DE's other requests are done (dispatcher.cpp).
  bool hbm_whole_de = false;
  // When its DE HBM was promised (queued schedulers) or allocated (by the loader; with the DE buffer in HBM,
  // before its first byte lands there: engine/de_buffer.h); -1 before.
  double t_hbm = -1;
  double pe_buf_bytes = 0, de_buf_bytes = 0;  // DRAM buffer bytes held on each side
  // Milestones.
  double t_issue = -1, t_ready = -1, t_prefill_start = -1, t_first = -1, t_decode_join = -1, t_second = -1,
         t_done = -1;
  // Node failures (control/node_failures.h): a lost request's node failed under it; its activities still in
  // flight drop it when they return, and its turn runs again as a new request, which counts its restarts and
  // the node_down event (its index in the scenario's events) that caused the last one (-1: none).
  bool lost = false;
  bool pe_placed = false, de_placed = false;  // it was given a PE, a DE (queued schedulers: one at a time)
  int restarts = 0;
  int restart_event = -1;
  double read_bytes = 0;                      // bytes of its storage reads done
  double read_s = 0;                          // time spent in storage reads (longest side)
  double t_read_start = -1, t_read_end = -1;  // first storage read began, last one ended
};

// The hit tokens read from storage through the PE node (pe_side) or the DE node: the PE side covers the
// hit's first pe_fraction, the DE side the rest; each reads what its node's DRAM tier does not hold.
inline double storage_tokens(const Request& r, bool pe_side) {
  const double pe_part = r.pe_fraction * r.hit;
  if (pe_side) return r.pe_fraction > 0 ? std::max(0.0, pe_part - r.pe_cached) : 0.0;
  return r.pe_fraction < 1 ? std::max(0.0, r.hit - std::max(pe_part, r.de_cached)) : 0.0;
}

// The bytes of `bytes` of the request's KV that go on the wire (and into buffers): all of them, or none on
// the free transport. Every size the engine moves, holds or persists for a request goes through here.
inline double wire_bytes(const Request& r, double bytes) {
  return r.kv_transport == KvTransport::kFree ? 0.0 : bytes;
}

}  // namespace sim::engine
