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
      in_use_[id] = 1;
      return id;
    }
    slots_.push_back(r);
    in_use_.push_back(1);
    return static_cast<RequestId>(slots_.size() - 1);
  }
  // REQUIRES: `id` in flight. Its slot may be reused by the next add().
  void release(RequestId id) {
    in_use_[id] = 0;
    free_.push_back(id);
  }
  // A request lost with a failed node (control/node_failures.h): no longer in flight, but its slot is never
  // reused, since actors that were moving its bytes may still read it when their transfer returns.
  void retire(RequestId id) {
    in_use_[id] = 0;
    retired_++;
  }
  // The ids in flight, in id order.
  std::vector<RequestId> in_flight_ids() const {
    std::vector<RequestId> out;
    for (size_t i = 0; i < in_use_.size(); ++i)
      if (in_use_[i]) out.push_back(static_cast<RequestId>(i));
    return out;
  }
  Request& operator[](RequestId id) { return slots_[id]; }
  const Request& operator[](RequestId id) const { return slots_[id]; }
  size_t in_flight() const { return slots_.size() - free_.size() - retired_; }

 private:
  std::deque<Request> slots_;
  std::vector<RequestId> free_;
  std::vector<char> in_use_;
  size_t retired_ = 0;
};

}  // namespace sim::engine
