// End-to-end checks of storage.capacity_bytes (sim/storage/prefix_store.h) on the I/O-bound 1P1D
// (tests/e2e/cases/io_1p1d.json: 1 MB of KV per token, Basic) with one agent replaying one_agent.jsonl:
// turns (append, gen) = (5000, 100), (2000, 100), (1000, 50), (500, 20). With a capacity of 6,000 tokens
// (6e9 B) and 64-token blocks, worked by hand:
//   turn 0: reads 0; stores 5,100
//   turn 1: reads 5,100; stores 7,200 > 6,000: the tail goes down to 93 blocks = 5,952 (1,248 evicted)
//   turn 2: reads 5,952, computes 1,248 again (miss 2,248); stores 8,250: 2,298 evicted, 5,952 kept
//   turn 3: reads 5,952, computes 2,298 again (miss 2,798); stores 8,770: 2,818 evicted
// Reads 17,004 tokens (unlimited: 0 + 5,100 + 7,200 + 8,250 = 20,550); 3,546 recomputed; 6,364 evicted.
#include <catch2/catch.hpp>

#include "tests/e2e/support.h"

namespace {

const std::string kStorageCase = e2e::case_file("io_1p1d.json");

double link_bytes(const nlohmann::json& j, int node, const std::string& direction) {
  for (const auto& e : j.at("resources").at("snic"))
    if (e.at("node") == node && e.at("direction") == direction) return e.at("bytes").get<double>();
  FAIL("no snic " << node << " " << direction);
  return 0;
}

}  // namespace

TEST_CASE("Storage capacity: evicted tails are computed again, read bytes and persist bytes by hand",
          "[e2e]") {
  const auto base = e2e::run_ok(kStorageCase);
  const auto j = e2e::run_ok(kStorageCase, {"storage.capacity_bytes=6e9"});
  const auto& st = j.at("summary").at("storage");
  CHECK(st.at("recomputed_tokens").get<double>() == 3546);
  CHECK(st.at("evicted_bytes").get<double>() == Approx(6364e6));
  CHECK(st.at("evictions").get<int>() == 3);
  CHECK(st.at("stored_bytes_end").get<double>() == Approx(5952e6));
  CHECK(st.at("hit_rate").get<double>() == Approx(17004.0 / 20550));
  // The reads cross the PE node's SNIC (Basic): the stored prefixes only.
  CHECK(link_bytes(base, 0, "in") == Approx(20550e6));
  CHECK(link_bytes(j, 0, "in") == Approx(17004e6));
  CHECK(j.at("summary").at("storage_read_bytes").get<double>() == Approx(17004e6));
  // The recomputed KV is persisted again, from the DE node: 8,770 tokens of context + 3,546.
  CHECK(link_bytes(base, 1, "out") == Approx(8770e6));
  CHECK(link_bytes(j, 1, "out") == Approx(12316e6));
  // The turns' hit rate counts the recomputed tokens as miss: 17,004 hits of 29,050 prompt tokens
  // (20,550 + 8,500).
  CHECK(j.at("summary").at("hit_rate").get<double>() == Approx(17004.0 / 29050));
  // Unlimited: nothing evicted, every context token read; the working set is the whole trajectory.
  const auto& u = base.at("summary").at("storage");
  CHECK(u.at("capacity_bytes").is_null());
  CHECK(u.at("recomputed_tokens").get<double>() == 0);
  CHECK(u.at("hit_rate").get<double>() == 1.0);
  CHECK(u.at("stored_bytes_peak").get<double>() == Approx(8770e6));
}

TEST_CASE("Storage capacity: room for the whole trajectory -> the run is the unlimited one", "[e2e]") {
  auto a = e2e::run_ok(kStorageCase);
  auto b = e2e::run_ok(kStorageCase, {"storage.capacity_bytes=8770e6"});
  CHECK(b.at("summary").at("storage").at("evicted_bytes").get<double>() == 0);
  for (auto* j : {&a, &b}) {
    j->erase("run_info");
    j->at("scenario").erase("storage");
    j->at("summary").erase("storage");
  }
  CHECK(a == b);
}
