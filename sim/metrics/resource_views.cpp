#include "sim/metrics/resource_views.h"

#include <fmt/format.h>

#include <limits>

#include "sim/metrics/results.h"

namespace sim::metrics {

namespace {

// resources.<class>[] entries and the per-class mean utilisation ("prefill.cnic.write" -> mean).
void link_views(const LinkStats& ls, nlohmann::json& resources, std::map<std::string, double>& class_util,
                std::map<std::string, int>& class_n) {
  const auto& h = ls.handles();
  for (size_t i = 0; i < h.links.size(); ++i) {
    const auto& t = h.links[i];
    const auto& r = ls.results()[i];
    nlohmann::json e = {{"node", t.node},
                        {"role", platform::name(h.nodes[t.node].role)},
                        {"direction", t.direction},
                        {"bytes", r.bytes},
                        {"bandwidth_Bps", t.bandwidth_Bps},
                        {"utilization", r.utilization},
                        {"peak_utilization", r.peak},
                        {"busy_s", r.busy_s}};
    if (t.gpu >= 0) e["gpu"] = t.gpu;
    if (!r.series.empty()) e["series"] = r.series;
    resources[platform::name(t.resource)].push_back(e);
    const std::string key = fmt::format("{}.{}.{}", platform::name(h.nodes[t.node].role),
                                        platform::name(t.resource), t.direction);
    class_util[key] += r.utilization;
    class_n[key]++;
  }
}

}  // namespace

ResourceViews resource_views(const LinkStats& links, const std::vector<GpuLoad>& pes,
                             const std::vector<GpuLoad>& des, const std::vector<BufferLoad>& buffers,
                             double end) {
  ResourceViews v;
  v.resources = nlohmann::json::object();
  nlohmann::json& resources = v.resources;
  const char* kGpu = platform::name(platform::ResourceClass::kGpu);
  const std::string kPrefillGpu =
      platform::class_key(platform::NodeRole::kPrefill, platform::ResourceClass::kGpu, "compute");
  const std::string kDecodeGpu =
      platform::class_key(platform::NodeRole::kDecode, platform::ResourceClass::kGpu, "compute");
  const std::string kPrefillPass =
      platform::class_key(platform::NodeRole::kPrefill, platform::ResourceClass::kGpu, "pass");
  std::map<std::string, double>& cls = v.classes;
  std::map<std::string, int> cls_n;
  link_views(links, resources, cls, cls_n);
  for (const auto& pe : pes) {
    const double u = end > 0 ? pe.busy_s / end : 0;
    const double held = end > 0 ? pe.pass_s / end : 0;
    resources[kGpu].push_back({{"node", pe.node},
                               {"role", platform::name(platform::NodeRole::kPrefill)},
                               {"gpu", pe.gpu},
                               {"busy_s", pe.busy_s},
                               {"utilization", u},
                               {"pass_s", pe.pass_s},
                               {"pass_utilization", held}});
    cls[kPrefillGpu] += u;
    cls_n[kPrefillGpu]++;
    cls[kPrefillPass] += held;
    cls_n[kPrefillPass]++;
  }
  for (const auto& de : des) {
    const double u = end > 0 ? de.busy_s / end : 0;
    resources[kGpu].push_back({{"node", de.node},
                               {"role", platform::name(platform::NodeRole::kDecode)},
                               {"gpu", de.gpu},
                               {"busy_s", de.busy_s},
                               {"utilization", u},
                               {"max_batch", de.max_batch}});
    cls[kDecodeGpu] += u;
    cls_n[kDecodeGpu]++;
  }
  const char* kBuffer = platform::name(platform::ResourceClass::kBuffer);
  for (const auto& b : buffers) {
    const double mean = end > 0 ? b.byte_s / end : 0;
    const double u = b.capacity_bytes > 0 ? mean / b.capacity_bytes : 0;
    resources[kBuffer].push_back({{"node", b.node},
                                  {"role", platform::name(b.role)},
                                  {"capacity_bytes", b.capacity_bytes},
                                  {"mean_bytes", mean},
                                  {"peak_bytes", b.peak_bytes},
                                  {"utilization", u}});
    const std::string key = platform::class_key(b.role, platform::ResourceClass::kBuffer, "occupancy");
    cls[key] += u;
    cls_n[key]++;
  }
  std::string best;
  double best_u = -1;
  const auto occupancy = [&](const std::string& k) {
    return k == kDecodeGpu || k == kPrefillPass ||
           k.find(std::string(".") + kBuffer + ".") != std::string::npos;
  };
  for (auto& [k, u] : cls) {
    u /= cls_n[k];
    if (!occupancy(k) && u > best_u) {
      best_u = u;
      best = k;
    }
  }
  v.bottleneck = {{"resource", best}, {"utilization", best_u}};
  return v;
}

nlohmann::json balance_summary(const LinkStats& links, const engine::Recorder& rec,
                               const config::OutputConfig& out, double jct) {
  constexpr double kFirstPart = 0.05;
  const double interval = out.timeseries_interval_s;
  return {
      {"window_s", out.window_s},
      {"snic_max_avg", links.snic_max_avg()},
      {"snic_max_avg_series", interval_means(links.snic_ratio_windows(), interval, jct)},
      {"attention_max_avg", mean_until(rec.attention_balance, kFirstPart * jct)},
      {"attention_max_avg_run", mean_until(rec.attention_balance, std::numeric_limits<double>::infinity())},
      {"attention_max_avg_series", interval_means(rec.attention_balance, interval, jct)},
      {"series_interval_s", interval}};
}

}  // namespace sim::metrics
