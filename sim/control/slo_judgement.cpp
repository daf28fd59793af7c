#include "sim/control/slo_judgement.h"

#include <vector>

#include "sim/metrics/results.h"

namespace sim::control {

void judge_slo(const config::ScenarioConfig& sc, const engine::Recorder& rec, const std::string& stopped_by,
               double warmup_end_s, nlohmann::json& s) {
  const config::SloConfig& slo = sc.slo;
  const bool online = sc.workload.mode == "online";
  const double from = online && warmup_end_s >= 0 ? warmup_end_s : -1.0;
  std::vector<double> ttft, tpot;
  int64_t ok = 0;
  for (const auto& t : rec.turns) {
    if (!(t.t_first > from)) continue;
    ttft.push_back(t.ttft);
    if (t.tpot >= 0) tpot.push_back(t.tpot);
    if (t.ttft <= slo.ttft_s && (t.tpot < 0 || t.tpot <= slo.tpot_s)) ok++;
  }
  const nlohmann::json ttft_d = metrics::distribution(ttft), tpot_d = metrics::distribution(tpot);
  const double ttft_v = ttft_d[slo.statistic].get<double>(), tpot_v = tpot_d[slo.statistic].get<double>();
  s["slo"] = {{"ttft_s", slo.ttft_s},
              {"tpot_s", slo.tpot_s},
              {"statistic", slo.statistic},
              {"warmup_s", slo.warmup_s < 0 ? nlohmann::json("auto") : nlohmann::json(slo.warmup_s)},
              {"warmup_end_s", online && warmup_end_s >= 0 ? nlohmann::json(warmup_end_s) : nlohmann::json()},
              {"turns_judged", ttft.size()},
              {"ttft_judged_s", ttft.empty() ? nlohmann::json() : nlohmann::json(ttft_v)},
              {"tpot_judged_s", tpot.empty() ? nlohmann::json() : nlohmann::json(tpot_v)}};
  s["slo_attainment"] = ttft.empty() ? 0.0 : static_cast<double>(ok) / ttft.size();
  s["meets_slo"] = !ttft.empty() && stopped_by != "ttft_slo" && ttft_v <= slo.ttft_s && tpot_v <= slo.tpot_s;
}

}  // namespace sim::control
