#include "sim/engine/de_buffer.h"

#include "sim/engine/sg_compat.h"

namespace sim::engine {

namespace {

// With the DE buffer in HBM: whether the request needs no early HBM (the free transport lands no byte)
// or holds it already (allocated, or promised by a queued scheduler).
bool hbm_held_or_unneeded(const Request& r) {
  return wire_bytes(r, 1) <= 0 || r.t_hbm >= 0;
}

}  // namespace

bool de_space_fits(EngineContext& c, const Request& r) {
  if (!de_buffer_hbm(c)) return c.buffers.de_fits(r, c.loads.de_node(r.de));
  if (hbm_held_or_unneeded(r) || c.hbm.can_allocate(r, r.de)) return true;
  c.hbm.refuse(r.de);  // the caller waits: the next release on the DE wakes it
  return false;
}

bool take_de_space(EngineContext& c, Request& r) {
  if (!de_buffer_hbm(c)) return c.buffers.reserve_de(r, c.loads.de_node(r.de));
  if (!de_space_fits(c, r)) return false;
  if (!hbm_held_or_unneeded(r)) c.hbm.allocate(r, r.de, now());
  return true;
}

simgrid::s4u::Host* de_side_host(const EngineContext& c, int node, int gpu) {
  return de_buffer_hbm(c) ? c.h.nodes[node].gpus[gpu] : c.h.nodes[node].bufs[gpu];
}

void de_hbm_freed(EngineContext& c, int de) {
  if (de_buffer_hbm(c) && c.hbm.take_refused(de)) c.buffers.notify_room(c.loads.de_node(de));
}

}  // namespace sim::engine
