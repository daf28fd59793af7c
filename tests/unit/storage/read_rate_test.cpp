// What one node's storage client reaches (sim/storage/read_rate.h): rate(B) = E x B / (B + E x t), with
// E = storage.efficiency x SNIC and t = storage.request_overhead_s, against hand computations.
#include "sim/storage/read_rate.h"

#include <catch2/catch.hpp>

namespace sim::storage {
namespace {

// A node like hopper-8x400g.json's (SNIC 50e9 B/s) with a storage client like the paper engine's: 3FS at
// 0.859 of the SNIC, and 45 us per block (a value of the storage.request_overhead_s calibration, set here so
// that a refit does not move these hand computations; the file's current value is checked in
// engine_test.cpp).
struct Node {
  config::HardwareSpec hw;
  config::EngineSpec client;
};
Node paper_node() {
  Node n;
  n.hw.snic_bw_Bps = 50e9;
  n.client.storage_efficiency = 0.859;
  n.client.storage_request_overhead_s = 45e-6;
  n.hw.storage_bw_per_node_Bps = 0;
  return n;
}

}  // namespace

TEST_CASE("Storage read rate: ds660b's 64-token blocks -> 26.38 GB/s of the SNIC's 50", "[unit]") {
  const Node n = paper_node();
  // B = 64 tokens x 48,068 B = 3,076,352 B; E = 0.859 x 50e9 = 42.95e9 B/s; E x t = 42.95e9 x 45e-6
  // = 1,932,750 B. rate = 42.95e9 x 3,076,352 / (3,076,352 + 1,932,750) = 42.95e9 x 3,076,352 / 5,009,102
  // = 26.377845e9 B/s. (One block: 3,076,352 / 42.95e9 = 71.63 us of bytes + 45 us = 116.63 us.)
  // A rate without the overhead would be 42.95e9; one that charges the overhead at the SNIC rate (50e9 x t)
  // 42.95e9 x 3,076,352 / 5,326,352 = 24.81e9.
  CHECK(backend_Bps(n.hw, n.client, 3076352) == Approx(42.95e9 * 3076352 / 5009102).epsilon(1e-12));
  CHECK(backend_Bps(n.hw, n.client, 3076352) == Approx(26.377845e9).epsilon(1e-7));
  CHECK(read_Bps(n.hw, n.client, 3076352) == Approx(26.377845e9).epsilon(1e-7));
  // Qwen 32B's 64-token blocks: 64 x 262,144 = 16,777,216 B: 42.95e9 x 16,777,216 / 18,709,966
  // = 38.513e9 B/s.
  CHECK(read_Bps(n.hw, n.client, 16777216) == Approx(42.95e9 * 16777216 / 18709966).epsilon(1e-12));
  CHECK(read_Bps(n.hw, n.client, 16777216) == Approx(38.513e9).epsilon(1e-4));
  // Larger blocks approach E; a block of exactly E x t bytes reads at E / 2.
  CHECK(read_Bps(n.hw, n.client, 1932750) == Approx(42.95e9 / 2).epsilon(1e-12));
}

TEST_CASE("Storage read rate: large blocks or no overhead -> efficiency x SNIC, all 1 -> no backend link",
          "[unit]") {
  Node n = paper_node();
  CHECK(backend_Bps(n.hw, n.client, 0) == Approx(42.95e9).epsilon(1e-12));  // block_bytes <= 0: large blocks
  CHECK(read_Bps(n.hw, n.client, 0) == Approx(42.95e9).epsilon(1e-12));
  n.client.storage_request_overhead_s = 0;  // t = 0: the rate of every block size is E
  CHECK(backend_Bps(n.hw, n.client, 3076352) == Approx(42.95e9).epsilon(1e-12));
  CHECK(read_Bps(n.hw, n.client, 3076352) == Approx(42.95e9).epsilon(1e-12));
  n.client.storage_efficiency = 1;  // the SNIC alone: no backend link at all, the read runs at the line rate
  CHECK(backend_Bps(n.hw, n.client, 3076352) == 0);
  CHECK(read_Bps(n.hw, n.client, 3076352) == 50e9);
  // Efficiency 1 but an overhead: E = 50e9, E x t = 2,250,000 B: 50e9 x 3,076,352 / 5,326,352 = 28.878e9.
  n.client.storage_request_overhead_s = 45e-6;
  CHECK(read_Bps(n.hw, n.client, 3076352) == Approx(50e9 * 3076352 / 5326352).epsilon(1e-12));
}

TEST_CASE("Storage read rate: an explicit per-node bandwidth -> wins over efficiency and overhead",
          "[unit]") {
  Node n = paper_node();
  n.hw.storage_bw_per_node_Bps = 30e9;
  CHECK(backend_Bps(n.hw, n.client, 3076352) ==
        30e9);  // not 26.38e9: the explicit value replaces the formula
  CHECK(backend_Bps(n.hw, n.client, 0) == 30e9);
  CHECK(read_Bps(n.hw, n.client, 3076352) == 30e9);
  n.hw.storage_bw_per_node_Bps = 80e9;  // faster than the SNIC: the SNIC caps the read
  CHECK(backend_Bps(n.hw, n.client, 3076352) == 80e9);
  CHECK(read_Bps(n.hw, n.client, 3076352) == 50e9);
}

}  // namespace sim::storage
