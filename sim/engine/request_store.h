// RequestStore: the requests in flight, by id. A slot table with a free list, so memory stays O(requests
// in flight), not O(turns); slots live in a deque, so a Request& stays valid while other actors add
// requests (an actor may hold one across a simcall). A released slot is reused by a later add(): hold
// a reference only while the request is in flight.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "sim/engine/request.h"

namespace sim::engine {

class RequestStore {
 public:
  RequestId add(const Request& r) {
    if (!free_.empty()) {
      const RequestId id = free_.back();
      free_.pop_back();
      slots_[id] = r;
      return id;
    }
    slots_.push_back(r);
    return static_cast<RequestId>(slots_.size() - 1);
  }
  // REQUIRES: `id` in flight. Its slot may be reused by the next add().
  void release(RequestId id) { free_.push_back(id); }
  Request& operator[](RequestId id) { return slots_[id]; }
  const Request& operator[](RequestId id) const { return slots_[id]; }
  size_t in_flight() const { return slots_.size() - free_.size(); }

 private:
  std::deque<Request> slots_;
  std::vector<RequestId> free_;
};

}  // namespace sim::engine
