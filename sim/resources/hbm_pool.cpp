#include "sim/resources/hbm_pool.h"

#include <algorithm>

namespace sim::resources {

HbmPool::HbmPool(engine::LoadBook& book, int des, double per_de_bytes, double kv_bytes_per_token)
    : book_(book),
      per_de_(des, per_de_bytes),
      initial_(per_de_bytes),
      kv_token_(kv_bytes_per_token),
      whole_claimed_(des, 0),
      refused_(des, 0),
      staged_(des, 0) {}

void HbmPool::set_per_de(int de, double bytes) {
  book_.free_hbm(de) += bytes - per_de_[de];
  per_de_[de] = bytes;
}

void HbmPool::stage(int de, double bytes) {
  staged_[de] += bytes;
  staged_total_ += bytes;
  peak_staged_one_ = std::max(peak_staged_one_, staged_[de]);
  peak_staged_total_ = std::max(peak_staged_total_, staged_total_);
}

void HbmPool::promise(engine::Request& r, int de, bool whole, double now) {
  r.hbm_bytes = whole ? per_de_[de] : std::min(need(r), book_.free_hbm(de));
  book_.free_hbm(de) -= r.hbm_bytes;
  r.hbm_whole_de = whole;
  r.t_hbm = now;
  if (whole) whole_claimed_[de] = 1;
  stage(de, r.hbm_bytes);
}

bool HbmPool::can_allocate(const engine::Request& r, int de) const {
  const double free = book_.free_hbm(de);
  return need(r) <= free || free >= per_de_[de] - 1;
}

void HbmPool::allocate(engine::Request& r, int de, double now) {
  r.hbm_bytes = need(r);
  book_.free_hbm(de) -= r.hbm_bytes;
  r.t_hbm = now;
  stage(de, r.hbm_bytes);
}

void HbmPool::joined(const engine::Request& r, int de) {
  stage(de, -r.hbm_bytes);
}

void HbmPool::release(engine::Request& r, int de) {
  if (r.t_decode_join < 0) stage(de, -r.hbm_bytes);  // it never joined (a one-token turn)
  book_.free_hbm(de) += r.hbm_bytes;
  r.hbm_bytes = 0;
  if (r.hbm_whole_de) whole_claimed_[de] = 0;
}

double HbmPool::held() const {
  double held = 0;
  for (const auto& d : book_.view().des) held += per_de_[d.id] - d.free_hbm;
  return held;
}

}  // namespace sim::resources
