// PdGuard (sim/policy/pd_guard.h) on hand-made live points: pass-through inside the range, for the
// Oracle and for requests with no hit; the share 1 - f* outside it, with the bytes it moved counted.
#include "sim/policy/pd_guard.h"

#include <catch2/catch.hpp>
#include <memory>

namespace {

using sim::policy::ReadDecision;

// Answers whatever `next` holds.
class Fixed : public sim::policy::ReadPathPolicy {
 public:
  explicit Fixed(const ReadDecision* next) : next_(next) {}
  ReadDecision choose(const sim::policy::RequestInfo&, const sim::policy::EngineLoad&,
                      const sim::policy::EngineLoad&, const sim::policy::ClusterView&) override {
    return *next_;
  }

 private:
  const ReadDecision* next_;
};

sim::policy::RequestInfo request(double hit) {
  sim::policy::RequestInfo r;
  r.hit_tokens = hit;
  return r;
}

}  // namespace

TEST_CASE("PdGuard: outside the live range -> PE share 1 - f*, inside or Oracle -> the inner decision",
          "[unit]") {
  ReadDecision next{1.0, false};
  sim::cost::LivePoint live;
  live.valid = true;
  live.inside = true;
  live.share.de_share = 0.25;
  sim::policy::PdGuard guard(std::make_unique<Fixed>(&next), &live, 2.0);
  const sim::policy::EngineLoad pe, de;
  const sim::policy::ClusterView view;

  CHECK(guard.choose(request(100), pe, de, view).pe_fraction == 1.0);  // inside
  live.inside = false;
  CHECK(guard.choose(request(100), pe, de, view).pe_fraction == 0.75);  // 25 tokens x 2 B to the DE path
  next = {0.0, false};
  CHECK(guard.choose(request(10), pe, de, view).pe_fraction == 0.75);  // 7.5 tokens x 2 B to the PE path
  next = {0.75, false};
  CHECK(guard.choose(request(10), pe, de, view).pe_fraction == 0.75);  // already there: not steered
  CHECK(guard.choose(request(0), pe, de, view).pe_fraction == 0.75);   // no hit: not a decision
  next = {1.0, true};
  const ReadDecision oracle = guard.choose(request(100), pe, de, view);
  CHECK(oracle.zero_cost);
  CHECK(oracle.pe_fraction == 1.0);
  live.valid = false;  // P or D is 0: nothing to steer by
  next = {0.0, false};
  CHECK(guard.choose(request(100), pe, de, view).pe_fraction == 0.0);

  const auto& c = guard.counters();
  CHECK(c.decisions == 5);
  CHECK(c.steered == 2);
  CHECK(c.bytes_to_de_path == 50.0);
  CHECK(c.bytes_to_pe_path == 15.0);
}
