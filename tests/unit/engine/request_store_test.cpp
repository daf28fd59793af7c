// RequestStore: a reference to a request in flight stays valid while other requests are added (an actor
// holds one across a simcall, during which other actors issue turns).
#include "sim/engine/request_store.h"

#include <catch2/catch.hpp>

using sim::engine::Request;
using sim::engine::RequestId;
using sim::engine::RequestStore;

TEST_CASE("Request store: a reference held while 100,000 requests are added -> same object, same data",
          "[unit]") {
  RequestStore store;
  Request first;
  first.agent = 7;
  first.hit = 1234;
  const RequestId id = store.add(first);
  Request& held = store[id];
  const Request* address = &held;
  for (int i = 0; i < 100000; ++i) {
    Request r;
    r.agent = i;
    store.add(r);
  }
  held.miss = 56;  // written through the reference taken before the adds
  CHECK(&store[id] == address);
  CHECK(store[id].agent == 7);
  CHECK(store[id].hit == 1234);
  CHECK(store[id].miss == 56);
  CHECK(store.in_flight() == 100001);
}

TEST_CASE("Request store: a released slot -> reused by the next add, the others untouched", "[unit]") {
  RequestStore store;
  Request a, b, c;
  a.agent = 1;
  b.agent = 2;
  c.agent = 3;
  const RequestId ia = store.add(a), ib = store.add(b);
  store.release(ia);
  CHECK(store.in_flight() == 1);
  const RequestId ic = store.add(c);
  CHECK(ic == ia);
  CHECK(store[ic].agent == 3);
  CHECK(store[ib].agent == 2);
  CHECK(store.in_flight() == 2);
}
