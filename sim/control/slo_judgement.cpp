#include "sim/control/slo_judgement.h"

#include <vector>

#include "sim/metrics/results.h"

namespace sim::control {

void judge_slo(const config::ScenarioConfig& sc, const engine::Recorder& rec, const std::string& stopped_by,
               double warmup_end_s, nlohmann::json& s) {
  const config::SloConfig& slo = sc.slo;
  const bool online = sc.workload.mode == "online";
  const double from = online && warmup_end_s >= 0 ? warmup_end_s : -1.0;
  const bool relative = slo.relative();
  std::vector<double> ttft, tpot, u_ttft, u_tpot, ratio;
  int64_t ok = 0, ttft_ok = 0, tpot_ok = 0;
  for (const auto& t : rec.turns) {
    if (!(t.t_first > from)) continue;
    ttft.push_back(t.ttft);
    if (t.tpot >= 0) tpot.push_back(t.tpot);
    if (!relative) {
      if (t.ttft <= slo.ttft_s && (t.tpot < 0 || t.tpot <= slo.tpot_s)) ok++;
      continue;
    }
    // Relative: against the turn's own unloaded latency (cost/unloaded.h).
    const bool ttft_in = t.ttft <= slo.ttft_scale * t.ttft_unloaded;
    const bool tpot_in = t.tpot < 0 || t.tpot <= slo.tpot_scale * t.tpot_unloaded;
    ttft_ok += ttft_in ? 1 : 0;
    tpot_ok += tpot_in ? 1 : 0;
    ok += ttft_in && tpot_in ? 1 : 0;
    u_ttft.push_back(t.ttft_unloaded);
    ratio.push_back(t.ttft_unloaded > 0 ? t.ttft / t.ttft_unloaded : 0.0);
    if (t.tpot >= 0) u_tpot.push_back(t.tpot_unloaded);
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
  const double attainment = ttft.empty() ? 0.0 : static_cast<double>(ok) / ttft.size();
  s["slo_attainment"] = attainment;
  if (!relative) {
    s["meets_slo"] =
        !ttft.empty() && stopped_by != "ttft_slo" && ttft_v <= slo.ttft_s && tpot_v <= slo.tpot_s;
    return;
  }
  nlohmann::json& r = s["slo"];
  r["mode"] = slo.mode;
  r["ttft_scale"] = slo.ttft_scale;
  r["tpot_scale"] = slo.tpot_scale;
  r["attainment"] = slo.attainment;
  const double n = static_cast<double>(ttft.size());
  r["ttft_met_share"] = ttft.empty() ? nlohmann::json() : nlohmann::json(ttft_ok / n);
  r["tpot_met_share"] = ttft.empty() ? nlohmann::json() : nlohmann::json(tpot_ok / n);
  r["unloaded_ttft_s"] = metrics::distribution(u_ttft);
  r["unloaded_tpot_s"] = metrics::distribution(u_tpot);
  r["ttft_over_unloaded"] = metrics::distribution(ratio);
  s["meets_slo"] = !ttft.empty() && stopped_by != "ttft_slo" && attainment >= slo.attainment;
}

}  // namespace sim::control
