#include "sim/engine/membership.h"

#include <algorithm>

namespace sim::engine {

using platform::NodeRole;

Membership::Membership(const std::vector<NodeRole>& roles, const std::vector<config::EventConfig>& events,
                       const std::vector<int>& gpus, bool any_node)
    : role_(roles),
      initial_(roles),
      draining_(roles.size(), 0),
      down_(roles.size(), 0),
      gpus_(gpus),
      dynamic_(any_node) {
  std::vector<char> pe(roles.size(), any_node ? 1 : 0), de(roles.size(), any_node ? 1 : 0);
  for (size_t n = 0; n < roles.size(); ++n) (roles[n] == NodeRole::kPrefill ? pe : de)[n] = 1;
  for (const auto& e : events) {
    if (e.kind == "node_down") dynamic_ = true;
    if (e.kind != "role_change") continue;
    dynamic_ = true;
    for (int n : e.nodes) (e.to == "prefill" ? pe : de)[n] = 1;
  }
  for (size_t n = 0; n < roles.size(); ++n) {
    if (pe[n]) pe_nodes_.push_back(static_cast<int>(n));
    if (de[n]) de_nodes_.push_back(static_cast<int>(n));
  }
}

int Membership::live_nodes(NodeRole r) const {
  int n = 0;
  for (size_t i = 0; i < role_.size(); ++i) n += role_[i] == r && !down_[i] ? 1 : 0;
  return n;
}

int Membership::live_gpus(NodeRole r) const {
  int n = 0;
  for (size_t i = 0; i < role_.size(); ++i) n += role_[i] == r && !down_[i] ? gpus_[i] : 0;
  return n;
}

std::vector<std::pair<int, int>> Membership::engines(NodeRole r) const {
  std::vector<std::pair<int, int>> out;
  for (int n : engine_nodes(r))
    for (int j = 0; j < gpus_[n]; ++j) out.emplace_back(n, j);
  return out;
}

std::vector<int> Membership::unit_of_engines(NodeRole r, int unit_gpus) const {
  const std::vector<std::pair<int, int>> all = engines(r);
  int initial_gpus = 0;
  for (const auto& [node, gpu] : all) initial_gpus += initial_[node] == r ? 1 : 0;
  const int units = std::max(1, initial_gpus / std::max(1, unit_gpus));
  std::vector<int> out;
  int start = 0, joined = 0;
  for (const auto& [node, gpu] : all) {
    if (initial_[node] == r) {
      out.push_back(std::min(units - 1, start++ / std::max(1, unit_gpus)));
    } else {
      const int deal = std::min(unit_gpus, gpus_[node]);  // GPUs dealt to one unit at a time
      out.push_back((joined++ / std::max(1, deal)) % units);
    }
  }
  return out;
}

}  // namespace sim::engine
