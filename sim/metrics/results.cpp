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
  const double held = rec.hbm_waiting_byte_s + rec.hbm_decoding_byte_s;
  j["de_hbm_waiting_fraction"] = held > 0 ? rec.hbm_waiting_byte_s / held : 0.0;
  return j;
}

nlohmann::json de_hbm_summary(const engine::Recorder& rec, const DeHbmInputs& in) {
  return {{"kv_bytes_per_de", in.kv_bytes_per_de},
          {"before_join_byte_s", rec.hbm_waiting_byte_s},
          {"decoding_byte_s", rec.hbm_decoding_byte_s},
          {"before_join_mean_bytes", in.duration_s > 0 ? rec.hbm_waiting_byte_s / in.duration_s : 0.0},
          {"before_join_peak_bytes", in.peak_before_join},
          {"before_join_peak_bytes_one_de", in.peak_before_join_one_de},
          {"before_join_peak_fraction_one_de",
           in.kv_bytes_per_de > 0 ? in.peak_before_join_one_de / in.kv_bytes_per_de : 0.0}};
}

nlohmann::json interval_means(const std::vector<std::pair<float, float>>& samples, double interval_s,
                              double end_s) {
  nlohmann::json out = nlohmann::json::array();
  if (interval_s <= 0 || end_s <= 0) return out;
  const size_t n = static_cast<size_t>(std::ceil(end_s / interval_s - 1e-9));
  std::vector<double> sum(n, 0.0);
  std::vector<int> count(n, 0);
  for (const auto& [t, v] : samples) {
    size_t k = static_cast<size_t>(std::max(0.0, std::floor(t / interval_s)));
    if (k >= n) k = n - 1;
    sum[k] += v;
    count[k]++;
  }
  for (size_t k = 0; k < n; ++k)
    out.push_back(count[k] ? nlohmann::json(sum[k] / count[k]) : nlohmann::json());
  return out;
}

nlohmann::json mean_until(const std::vector<std::pair<float, float>>& samples, double until_s) {
  double sum = 0;
  int count = 0;
  for (const auto& [t, v] : samples)
    if (t <= until_s) {
      sum += v;
      count++;
    }
  return count ? nlohmann::json(sum / count) : nlohmann::json();
}

nlohmann::json cost_summary(const CostInputs& in) {
  if (!in.per_node_hour) return nullptr;
  const double cluster_per_hour = *in.per_node_hour * in.nodes;
  const double run_cost = cluster_per_hour * in.duration_s / 3600;
  auto per = [run_cost](double units) -> nlohmann::json {
    if (units > 0) return run_cost / units;
    return nullptr;
  };
  const double tasks =
      in.turns_total > 0 && in.agents > 0 ? in.turns_completed / (in.turns_total / in.agents) : 0;
  return {{"per_node_hour", *in.per_node_hour},
          {"nodes", in.nodes},
          {"cluster_per_hour", cluster_per_hour},
          {"run_cost", run_cost},
          {"per_million_tokens", per(in.tokens / 1e6)},
          {"per_million_gen_tokens", per(in.gen_tokens / 1e6)},
          {"per_agent_task", per(tasks)}};
}

nlohmann::json units_summary(int gpus_each, const std::vector<UnitGpu>& gpus, double duration_s) {
  int count = 0;
  for (const auto& g : gpus) count = std::max(count, g.unit + 1);
  std::vector<double> busy(count, 0.0), n(count, 0.0);
  for (const auto& g : gpus) {
    busy[g.unit] += g.busy_s;
    n[g.unit] += 1;
  }
  std::vector<double> per_unit(count, 0.0);
  double sum = 0, lo = 0, hi = 0;
  for (int u = 0; u < count; ++u) {
    per_unit[u] = duration_s > 0 && n[u] > 0 ? busy[u] / n[u] / duration_s : 0;
    sum += per_unit[u];
    lo = u == 0 ? per_unit[u] : std::min(lo, per_unit[u]);
    hi = u == 0 ? per_unit[u] : std::max(hi, per_unit[u]);
  }
  return {{"count", count},
          {"gpus_each", gpus_each},
          {"utilization",
           {{"mean", count > 0 ? sum / count : 0.0}, {"min", lo}, {"max", hi}, {"spread", hi - lo}}},
          {"per_unit", per_unit}};
}

nlohmann::json time_split_summary(const engine::TimeSplitSum& t, double gpus, double duration_s, bool waits) {
  const double all = gpus * duration_s;
  const double idle = std::max(0.0, all - t.total_s());
  nlohmann::json j = {{"gpu_s", all}};
  for (const auto& [key, v] : {std::pair<const char*, double>{"compute", t.parts.compute_s},
                               {"exchange", t.parts.exchange_s},
                               {"fixed", t.parts.fixed_s},
                               {"cpu", t.parts.cpu_s},
                               {"imbalance", t.parts.imbalance_s},
                               {"stall", t.stall_s},
                               {"idle", idle}}) {
    j[std::string(key) + "_s"] = v;
    j[std::string(key) + "_share"] = all > 0 ? v / all : 0;
  }
  if (waits) {
    nlohmann::json& w = j["imbalance_by_cause"];
    const double imbalance = t.parts.imbalance_s;
    for (const auto& [key, v] : {std::pair<const char*, double>{"attention", t.waits.attention_s},
                                 {"dense", t.waits.dense_s},
                                 {"chunk", t.waits.chunk_s}}) {
      w[std::string(key) + "_s"] = v;
      w[std::string(key) + "_share"] = imbalance > 0 ? v / imbalance : 0;
    }
  }
  return j;
}

nlohmann::json prefill_passes_summary(const engine::PassStats& s) {
  if (s.passes == 0) return nullptr;
  const double passes = static_cast<double>(s.passes), batches = static_cast<double>(s.batches);
  const auto per_batch = [&](double v) { return batches > 0 ? v / batches : 0.0; };
  return {{"passes", s.passes},
          {"gpus_mean", s.gpus / passes},
          {"gpus_with_work_share", s.gpus > 0 ? s.gpus_with_work / s.gpus : 0.0},
          {"slowest_over_mean", s.slowest_over_mean / passes},
          {"with_cut_share", static_cast<double>(s.passes_with_cut) / passes},
          {"slowest_cut_share", static_cast<double>(s.passes_slowest_cut) / passes},
          {"batch_tokens_mean", per_batch(s.tokens)},
          {"batch_quota_measure_mean_s", per_batch(s.predicted_s)},
          {"batch_attention_mean_s", per_batch(s.attention_s)},
          {"closed_by_quota_share", per_batch(static_cast<double>(s.closed_by_quota))},
          {"closed_by_tokens_share", per_batch(static_cast<double>(s.closed_by_tokens))},
          {"closed_by_hbm_share", per_batch(static_cast<double>(s.closed_by_hbm))},
          {"wall_mean_s", s.wall_s / passes}};
}

}  // namespace sim::metrics
