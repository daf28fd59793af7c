// The compute-quota batch former (DualPath §6.2): FIFO filling, binary search on the last request's bsz.
#include "sim/cost/batch_quota.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace sim::cost {
namespace {

using Verdict = QuotaBatchFormer::Verdict;

// A dense toy model on a 4 FLOP/s GPU: 2 x 1 x (1 + 1) = 4 FLOPs per (query, attended token) pair, so
// the predicted attention time in seconds equals the attended tokens: sum over i = 1..bsz of cached + i.
config::ModelSpec toy_model(int topk = 0) {
  config::ModelSpec m;
  m.layers = 1;
  m.heads = 1;
  m.qk_head_dim = 1;
  m.v_head_dim = 1;
  m.attention_mfu = 1;
  m.peak_flops_factor = 1;
  m.sparse_topk = topk;
  return m;
}

config::HardwareSpec toy_hw() {
  config::HardwareSpec hw;
  hw.gpu_flops = 4;
  return hw;
}

// The batch `b` formed from `cs` as chunks.
std::vector<Chunk> chunks_of(const QuotaBatch& b, const std::vector<Chunk>& cs) {
  std::vector<Chunk> out(cs.begin(), cs.begin() + b.whole);
  if (b.chunk_bsz > 0) out.push_back({cs[b.whole].cached, b.chunk_bsz});
  return out;
}

// Checks `got` against a linear scan over the last request's bsz.
void check_against_scan(const std::vector<Chunk>& cs, const config::ModelSpec& m,
                        const config::HardwareSpec& hw, double quota, const QuotaBatch& got) {
  const std::vector<Chunk> batch = chunks_of(got, cs);
  const double t = attention_time_s(m, hw, batch);
  // Within the quota, unless the batch is one request cut to one token.
  if (!(got.whole == 0 && got.chunk_bsz == 1)) CHECK(t <= quota);
  // Every whole request fitted; the next one, whole, would not have.
  std::vector<Chunk> prefix(cs.begin(), cs.begin() + got.whole);
  CHECK(attention_time_s(m, hw, prefix) <= quota);
  if (got.whole == static_cast<int>(cs.size())) return;
  const Chunk next = cs[got.whole];
  prefix.push_back(next);
  CHECK(attention_time_s(m, hw, prefix) > quota);
  // Largest bsz < next.bsz that fits, by scanning every value.
  double best = 0;
  for (double b = 1; b < next.bsz; ++b) {
    prefix.back().bsz = b;
    if (attention_time_s(m, hw, prefix) <= quota) best = b;
  }
  const double want = best >= 1 ? best : (got.whole == 0 ? 1 : 0);
  CHECK(got.chunk_bsz == want);
}

}  // namespace

TEST_CASE("Batch quota: hand example -> two whole requests and the third chunked to 2 tokens", "[unit]") {
  // Times: {0,10} = 55 s each; {100, b} = 100 b + b(b+1)/2. Quota 400: 110 used, 290 left: b = 2 -> 203
  // fits, b = 3 -> 306 does not.
  const std::vector<Chunk> cs = {{0, 10}, {0, 10}, {100, 10}, {0, 1}};
  BatchLimits lim;
  lim.quota_s = 400;
  const QuotaBatch b = form_quota_batch(cs, toy_model(), toy_hw(), lim);
  CHECK(b.whole == 2);
  CHECK(b.chunk_bsz == 2);
  CHECK(b.size() == 3);
  CHECK(attention_time_s(toy_model(), toy_hw(), chunks_of(b, cs)) == 313);
}

TEST_CASE("Batch quota: next request cannot take one token -> it stays out, the batch is the rest",
          "[unit]") {
  // Quota 200: 110 used, 90 left; {100, 1} alone costs 101.
  BatchLimits lim;
  lim.quota_s = 200;
  const QuotaBatch b = form_quota_batch({{0, 10}, {0, 10}, {100, 10}}, toy_model(), toy_hw(), lim);
  CHECK(b.whole == 2);
  CHECK(b.chunk_bsz == 0);
}

TEST_CASE("Batch quota: a lone request over the quota even at one token -> runs with one token", "[unit]") {
  BatchLimits lim;
  lim.quota_s = 10;
  const QuotaBatch b = form_quota_batch({{1000, 50}, {0, 1}}, toy_model(), toy_hw(), lim);
  CHECK(b.whole == 0);
  CHECK(b.chunk_bsz == 1);
}

TEST_CASE("Batch quota: no quota -> every request joins whole", "[unit]") {
  const QuotaBatch b =
      form_quota_batch({{1e6, 1e4}, {1e6, 1e4}, {0, 3}}, toy_model(), toy_hw(), BatchLimits{});
  CHECK(b.whole == 3);
  CHECK(b.chunk_bsz == 0);
}

TEST_CASE("Batch quota: HBM cap -> stops before the request whose cached + bsz would overflow it", "[unit]") {
  BatchLimits lim;
  lim.hbm_bytes = 100;
  lim.hbm_bytes_per_token = 1;
  // 10 + 70 = 80 fit; + 30 = 110 does not. The first request always joins, even above the cap.
  CHECK(form_quota_batch({{0, 10}, {50, 20}, {0, 30}, {0, 1}}, toy_model(), toy_hw(), lim).whole == 2);
  CHECK(form_quota_batch({{500, 10}, {0, 1}}, toy_model(), toy_hw(), lim).whole == 1);
}

TEST_CASE("Batch quota former: offers one by one -> whole, then chunked, then closed", "[unit]") {
  const auto m = toy_model();
  const auto hw = toy_hw();
  QuotaBatchFormer f(m, hw, BatchLimits{400, 1e300, 0});
  auto o1 = f.offer({0, 10});
  CHECK(o1.verdict == Verdict::kWhole);
  CHECK(o1.bsz == 10);
  CHECK_FALSE(f.closed());
  auto o2 = f.offer({100, 10});
  CHECK(o2.verdict == Verdict::kChunked);
  CHECK(o2.bsz == 3);  // 55 used, 345 left: b = 3 -> 306 fits, b = 4 -> 410 does not
  CHECK(f.closed());
  CHECK(f.attention_s() == attention_time_s(m, hw, f.chunks()));
}

TEST_CASE(
    "Batch quota: random FIFO lists, dense and sparse -> within quota and the chunk a linear scan finds",
    "[unit]") {
  std::mt19937 rng(20240601);
  std::uniform_real_distribution<double> u(0, 1);
  const auto hw = toy_hw();
  for (int topk : {0, 700}) {
    const auto m = toy_model(topk);
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<Chunk> cs;
      const int n = 1 + static_cast<int>(u(rng) * 12);
      for (int i = 0; i < n; ++i) cs.push_back({std::floor(u(rng) * 5000), 1 + std::floor(u(rng) * 1500)});
      // Quotas from below one request's cost to above the whole list's.
      const double quota = std::pow(10.0, 2 + u(rng) * 5);
      BatchLimits lim;
      lim.quota_s = quota;
      INFO("topk " << topk << " trial " << trial << " quota " << quota);
      check_against_scan(cs, m, hw, quota, form_quota_batch(cs, m, hw, lim));
    }
  }
}

TEST_CASE("Batch quota: ds660b on Hopper at the paper's 300 ms -> the linear scan agrees", "[unit]") {
  auto m = config::load_model(std::string(DPSIM_SOURCE_DIR) + "/models/llm/ds660b.json");
  auto hw = config::load_hardware(std::string(DPSIM_SOURCE_DIR) + "/models/hardware/hopper-8x400g.json");
  REQUIRE(m.is_ok());
  REQUIRE(hw.is_ok());
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 10; ++trial) {
    // Long contexts with a few thousand new tokens (~25 ms of attention per layer each at ds660b's
    // attention efficiency): a dozen or so fill 300 ms.
    std::vector<Chunk> cs;
    for (int i = 0; i < 40; ++i) cs.push_back({std::floor(u(rng) * 64000), 1 + std::floor(u(rng) * 4000)});
    BatchLimits lim;
    lim.quota_s = 0.3;
    const QuotaBatch b = form_quota_batch(cs, *m, *hw, lim);
    INFO("trial " << trial);
    CHECK(b.size() < 40);
    check_against_scan(cs, *m, *hw, 0.3, b);
  }
}

}  // namespace sim::cost
