#include "sim/resources/buffer_pool.h"

#include <algorithm>
#include <simgrid/s4u/Engine.hpp>

namespace sim::resources {

namespace sg4 = simgrid::s4u;

BufferPool::BufferPool(int nodes, double capacity_bytes, double kv_bytes_per_token)
    : capacity_(capacity_bytes), kv_token_(kv_bytes_per_token), nodes_(nodes) {
  for (auto& n : nodes_) n.cv = sg4::ConditionVariable::create();
}

bool BufferPool::fits(int node, double bytes) const {
  const Node& n = nodes_[node];
  return bytes <= 0 || n.holders == 0 || n.used + bytes <= capacity_;
}

double BufferPool::read_need(const engine::Request& r, bool pe_side, double bytes) const {
  if (pe_side) return bytes;
  return r.de_buf_bytes > 0 ? 0.0 : engine::wire_bytes(r, (r.hit + r.miss) * kv_token_);
}

void BufferPool::integrate(int node) {
  Node& n = nodes_[node];
  const double t = sg4::Engine::get_clock();
  n.byte_s += n.used * (t - n.since);
  n.since = t;
}

double BufferPool::byte_s(int node, double t) const {
  const Node& n = nodes_[node];
  return n.byte_s + n.used * std::max(0.0, t - n.since);
}

void BufferPool::add(int node, double bytes) {
  integrate(node);
  Node& n = nodes_[node];
  n.used += bytes;
  n.peak = std::max(n.peak, n.used);
}

void BufferPool::take(engine::Request& r, int node, bool pe_side, double bytes) {
  double& held = pe_side ? r.pe_buf_bytes : r.de_buf_bytes;
  if (held <= 0 && bytes > 0) nodes_[node].holders++;
  add(node, bytes);
  held += bytes;
}

bool BufferPool::de_fits(const engine::Request& r, int de_node) const {
  return fits(de_node, read_need(r, false, 0));
}

bool BufferPool::reserve_de(engine::Request& r, int de_node) {
  const double need = read_need(r, false, 0);
  if (!fits(de_node, need)) return false;
  if (need > 0) take(r, de_node, false, need);
  return true;
}

void BufferPool::release(engine::Request& r, int node, bool pe_side) {
  double& held = pe_side ? r.pe_buf_bytes : r.de_buf_bytes;
  const double bytes = held;
  held = 0;
  if (bytes <= 0) return;
  integrate(node);
  Node& n = nodes_[node];
  n.used -= bytes;
  // The last holder gone: empty, exactly (the sums of takes and releases leave float residue, and a buffer
  // that holds 1e-8 B would never again take a request larger than the whole buffer).
  if (--n.holders == 0) n.used = 0;
  if (n.used < 1e-6 * bytes) n.used = std::max(0.0, n.used);
  notify_room(node);
}

void BufferPool::notify_room(int node) {
  Node& n = nodes_[node];
  // State first, then the notifications (simcalls: other actors run meanwhile), from a list taken out.
  std::vector<int> waiting;
  waiting.swap(n.waiting_pes);
  n.cv->notify_all();
  if (wake_pe_)
    for (int pe : waiting) wake_pe_(pe);
}

void BufferPool::wait_for_room(int node, int pe) {
  auto& w = nodes_[node].waiting_pes;
  if (std::find(w.begin(), w.end(), pe) == w.end()) w.push_back(pe);
}

double BufferPool::held() const {
  double held = 0;
  for (const auto& n : nodes_) held += n.used;
  return held;
}

void BufferPool::wake_all() {
  for (auto& n : nodes_) n.cv->notify_all();
}

}  // namespace sim::resources
