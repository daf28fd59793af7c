#include "sim/metrics/results.h"

#include <algorithm>
#include <cmath>

namespace sim::metrics {

nlohmann::json distribution(std::vector<double> xs) {
  nlohmann::json j = {{"mean", 0.0}, {"p50", 0.0}, {"p90", 0.0}, {"p99", 0.0}, {"max", 0.0}};
  if (xs.empty()) return j;
  std::sort(xs.begin(), xs.end());
  double sum = 0;
  for (double x : xs) sum += x;
  auto pct = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p / 100.0 * xs.size()));
    return xs[std::min(xs.size() - 1, k == 0 ? 0 : k - 1)];
  };
  j["mean"] = sum / xs.size();
  j["p50"] = pct(50);
  j["p90"] = pct(90);
  j["p99"] = pct(99);
  j["max"] = xs.back();
  return j;
}

nlohmann::json latency_summary(const engine::Recorder& rec) {
  std::vector<double> ttft, ttst, tpot, queue, read, prefill, alloc;
  for (const auto& s : rec.turns) {
    ttft.push_back(s.ttft);
    queue.push_back(s.queue);
    read.push_back(s.read);
    prefill.push_back(s.prefill);
    if (s.tpot >= 0) {
      ttst.push_back(s.ttst);
      tpot.push_back(s.tpot);
      alloc.push_back(s.alloc);
    }
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / v.size();
  };
  nlohmann::json j;
  j["ttft_s"] = distribution(ttft);
  j["ttst_s"] = distribution(ttst);
  j["tpot_s"] = distribution(tpot);
  j["ttft_breakdown_s"] = {{"queue", mean(queue)},
                           {"read", mean(read)},
                           {"prefill", mean(prefill)},
                           {"alloc_after_first_token", mean(alloc)}};
  return j;
}

}  // namespace sim::metrics
