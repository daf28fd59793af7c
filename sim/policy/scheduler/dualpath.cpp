// `dualpath`: the paper's two-level inter-engine scheduler (DualPath §6.1, PAPER.md §5.2-5.3), a queued
// policy. PE groups run Algorithm 1 on the global FIFO queue (C1/C2/C3 by tok_e against beta and by the
// node's read queue against alpha); DE groups run the two phases (least total tok_e across groups, then
// Z and HBM inside the group). The decisions are the pure functions of sim/policy/dualpath/.
#include <map>

#include "sim/core/check.h"
#include "sim/policy/dualpath/de_fetch.h"
#include "sim/policy/dualpath/pe_fetch.h"
#include "sim/policy/dualpath/thresholds.h"
#include "sim/policy/scheduler.h"

namespace sim::policy {
namespace {

std::vector<EngineLoad> members(const std::vector<EngineLoad>& all, const std::vector<int>& group) {
  std::vector<EngineLoad> out;
  out.reserve(group.size());
  for (int id : group) out.push_back(all[id]);
  return out;
}

class DualPathScheduler : public SchedulerPolicy {
 public:
  // alpha and beta (§6.1): the scenario's values, or derived from the hardware and the model
  // (dualpath/thresholds.h) when they are 0.
  void configure(const SchedulerContext& ctx) override {
    ctx_ = ctx;
    if (ctx.hardware == nullptr || ctx.engine == nullptr || ctx.model == nullptr) return;
    ctx_.alpha_tokens = dualpath::resolve_threshold(
        ctx.alpha_tokens, dualpath::alpha_tokens(*ctx.hardware, *ctx.engine, *ctx.model,
                                                 dualpath::kAlphaWindowS, ctx.storage_block_tokens));
    ctx_.beta_tokens = dualpath::resolve_threshold(
        ctx.beta_tokens,
        dualpath::beta_tokens(*ctx.hardware, *ctx.engine, *ctx.model, dualpath::kPaperTypicalTurn,
                              dualpath::kBetaWindowS, ctx.prefill_weight_shards));
  }
  Placement place(const RequestInfo&, const ClusterView&) override {
    SIM_CHECK(false, "the dualpath scheduler is queued: the engine calls fetch_pe/fetch_de, never place");
    return {};
  }
  bool queued() const override { return true; }

  Assignments fetch_pe(const std::vector<RequestInfo>& queue, const std::vector<int>& group,
                       const ClusterView& view) override {
    std::vector<EngineLoad> g = members(view.pes, group);
    int& after = last_pick_.emplace(group.front(), -1).first->second;  // -1: lowest id first
    const auto res = dualpath::pe_fetch(queue, g, view.read_q, ctx_.alpha_tokens, ctx_.beta_tokens, after);
    after = res.last_engine;
    Assignments out;
    for (const auto& a : res.assignments) out.emplace_back(a.queue_index, a.engine);
    return out;
  }

  std::vector<int> route_de(const std::vector<RequestInfo>& queue,
                            const std::vector<std::vector<int>>& groups,
                            const std::vector<double>& pending_tok, const ClusterView& view) override {
    std::vector<double> tok(groups.size(), 0.0);
    for (size_t i = 0; i < groups.size(); ++i) {
      tok[i] = pending_tok[i];
      for (int id : groups[i]) tok[i] += view.des[id].tok;
    }
    return dualpath::de_phase1(queue, tok);
  }

  Assignments fetch_de(const std::vector<RequestInfo>& queue, const std::vector<int>& group,
                       const ClusterView& view) override {
    std::vector<EngineLoad> g = members(view.des, group);
    const auto res = dualpath::de_phase2(queue, g, ctx_.kv_bytes_per_token);
    Assignments out;
    for (const auto& a : res.assignments) out.emplace_back(a.queue_index, a.engine);
    return out;
  }

 private:
  SchedulerContext ctx_;
  std::map<int, int> last_pick_;  // per PE group (keyed by its first engine): the last engine chosen
};

}  // namespace

std::unique_ptr<SchedulerPolicy> make_dualpath_scheduler() {
  return std::make_unique<DualPathScheduler>();
}

}  // namespace sim::policy
