// PrefixStore (sim/storage/prefix_store.h) with the lru policy, against hand-worked sequences of turns:
// which prefix loses its tail, by how many whole blocks, and what a later lookup finds.
#include "sim/storage/prefix_store.h"

#include <catch2/catch.hpp>

#include "sim/policy/registry.h"

namespace {

sim::storage::PrefixStore lru(double capacity, double block = 10, double interval = 0) {
  auto policy = sim::policy::make_eviction("lru");
  REQUIRE(policy);
  return sim::storage::PrefixStore(capacity, block, std::move(*policy), interval);
}

// One turn of `key`: looks up `context` tokens at t, stores `after` tokens at t + 1; returns the lookup.
double turn(sim::storage::PrefixStore& s, int key, double context, double after, double t) {
  const double found = s.lookup(key, context, t);
  s.store(key, after, t + 1);
  return found;
}

}  // namespace

TEST_CASE("PrefixStore: unlimited serves every token asked for and counts what it holds", "[storage]") {
  sim::storage::PrefixStore s(0, 64, nullptr);
  CHECK(turn(s, 0, 0, 500, 0) == 0);
  CHECK(turn(s, 1, 0, 700, 0) == 0);
  CHECK(turn(s, 0, 500, 900, 2) == 500);
  CHECK(s.counters().stored_tokens == 1600);  // 900 + 700
  CHECK(s.counters().evicted_tokens == 0);
  // Unlimited, a lookup is not capped by what was stored (a request trace's hits are the trace's).
  CHECK(s.lookup(5, 300, 3) == 300);
}

TEST_CASE("PrefixStore lru: the least recently used prefix loses its last whole blocks", "[storage]") {
  auto s = lru(300);
  turn(s, 0, 0, 100, 0);                  // a used at 1
  turn(s, 1, 0, 100, 1);                  // b used at 2
  turn(s, 2, 0, 100, 2);                  // c used at 3
  CHECK(turn(s, 0, 100, 100, 3) == 100);  // a used again at 4: b is now the least recent
  // d stores 55: 355 > 300, 55 over: b keeps floor((100 - 55) / 10) x 10 = 40 tokens (60 evicted).
  turn(s, 3, 0, 55, 5);
  CHECK(s.counters().evicted_tokens == 60);
  CHECK(s.counters().evictions == 1);
  CHECK(s.counters().stored_tokens == 295);
  CHECK(s.lookup(1, 100, 7) == 40);  // b's next turn reads 40 and computes 60 again
  CHECK(s.lookup(0, 100, 7) == 100);
  CHECK(s.lookup(2, 100, 7) == 100);
}

TEST_CASE("PrefixStore lru: an emptied victim gives way to the next least recent", "[storage]") {
  auto s = lru(200);
  turn(s, 0, 0, 50, 0);
  turn(s, 1, 0, 100, 1);
  turn(s, 2, 0, 120, 2);  // 270 > 200: a (50) goes whole, then b loses 20 -> 80
  CHECK(s.counters().evicted_tokens == 70);
  CHECK(s.counters().evictions == 2);
  CHECK(s.lookup(0, 50, 4) == 0);
  CHECK(s.lookup(1, 100, 4) == 80);
}

TEST_CASE("PrefixStore lru: a prefix pinned by its lookup is not evicted, the new one is cut instead",
          "[storage]") {
  auto s = lru(150);
  turn(s, 0, 0, 100, 0);
  CHECK(s.lookup(0, 100, 2) == 100);  // a's next turn reads its prefix: a is pinned
  s.lookup(1, 0, 2);
  s.store(1, 95, 3);  // 195 > 150: a may not go, so b keeps floor((95 - 45) / 10) x 10 = 50
  CHECK(s.counters().evicted_tokens == 45);
  s.unpin(0, 4);                    // a's reads are done: a is a candidate again, used at 4
  CHECK(s.lookup(1, 95, 5) == 50);  // b's next turn
  s.store(1, 90, 6);                // b holds 90: 190 > 150, and a (least recent) loses 40 -> 60
  CHECK(s.counters().evicted_tokens == 85);
  // a's turn ends: it lost its tail while the turn ran, so its new blocks are out of reach: a keeps 60.
  s.store(0, 130, 7);
  CHECK(s.counters().stored_tokens == 150);
  CHECK(s.lookup(0, 130, 8) == 60);
}

TEST_CASE("PrefixStore lru: unpinning or storing makes a prefix the most recently used", "[storage]") {
  auto s = lru(200);
  turn(s, 0, 0, 100, 0);  // a used at 1
  turn(s, 1, 0, 100, 1);  // b used at 2
  s.lookup(0, 100, 3);
  s.unpin(0, 4);  // a used at 4: b is the least recent now
  turn(s, 2, 0, 30, 5);
  CHECK(s.lookup(1, 100, 7) == 70);
  CHECK(s.lookup(0, 100, 7) == 100);
}

TEST_CASE("PrefixStore: the hit rate per series interval is the lookups' served over asked tokens",
          "[storage]") {
  auto s = lru(100, 10, 10);
  turn(s, 0, 0, 100, 0);               // [0, 10): asked 0
  turn(s, 1, 0, 100, 2);               // b stored: a (least recent) goes whole
  CHECK(s.lookup(0, 100, 12) == 0);    // [10, 20): asked 100, served 0
  CHECK(s.lookup(1, 100, 25) == 100);  // [20, 30): asked 100, served 100
  REQUIRE(s.series().size() == 3);
  CHECK(s.series()[0].first == 0);
  CHECK(s.series()[1] == std::make_pair(100.0, 0.0));
  CHECK(s.series()[2] == std::make_pair(100.0, 100.0));
  CHECK(s.counters().served_tokens == 100);
  CHECK(s.counters().asked_tokens == 200);
}
