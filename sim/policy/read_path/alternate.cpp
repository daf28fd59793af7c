// `alternate`: each request's side by a fixed share, blind to the read queues: the DE side for D/(P + D) of
// the requests (P, D: the nodes of the engines the view holds), spread evenly in submission order (the
// share's error stays below one request), the PE side for the rest. The share is the storage NICs' (one per
// node), as the queue-aware `dualpath` gives on average when every SNIC reads at one rate; the ablation's
// dual-path loading step (DualPath §7.4 adds the load-balanced choice with its scheduling algorithm,
// study/ablation.h).
#include <algorithm>

#include "sim/policy/read_path.h"

namespace sim::policy {
namespace {
class Alternate : public ReadPathPolicy {
 public:
  ReadDecision choose(const RequestInfo&, const EngineLoad&, const EngineLoad&,
                      const ClusterView& view) override {
    if (view.pes.size() != pes_ || view.des.size() != des_) count_nodes(view);
    owed_ += de_share_;
    if (owed_ >= 1 - 1e-12) {
      owed_ -= 1;
      return {0.0, false};
    }
    return {1.0, false};
  }

 private:
  // The share is recounted when the engines the view holds change (a role change, a failure).
  void count_nodes(const ClusterView& view) {
    pes_ = view.pes.size();
    des_ = view.des.size();
    auto nodes = [](const std::vector<EngineLoad>& engines) {
      std::vector<int> n;
      n.reserve(engines.size());
      for (const auto& e : engines) n.push_back(e.node);
      std::sort(n.begin(), n.end());
      return static_cast<double>(std::unique(n.begin(), n.end()) - n.begin());
    };
    const double p = nodes(view.pes), d = nodes(view.des);
    de_share_ = p + d > 0 ? d / (p + d) : 0;
  }
  size_t pes_ = 0, des_ = 0;
  double de_share_ = 0, owed_ = 0;
};
}  // namespace
std::unique_ptr<ReadPathPolicy> make_alternate() {
  return std::make_unique<Alternate>();
}
}  // namespace sim::policy
