#include "sim/study/slo_floor.h"

#include <fmt/format.h>

#include <vector>

#include "sim/cost/unloaded.h"
#include "sim/metrics/results.h"
#include "sim/workload/assembly.h"

namespace sim::study {

namespace {

constexpr int64_t kMaxTurns = 20000;  // the floor is a share and a statistic: a sample of turns gives it

struct Tokens {
  double hit, miss, gen;
};

}  // namespace

StatusOr<SloFloor> slo_floor(const config::ScenarioConfig& sc) {
  auto w = workload::build_workload(sc);
  if (!w) return w.status();
  std::vector<Tokens> turns;
  if (!w->replay.empty()) {
    for (const auto& s : w->replay)
      for (const auto& t : s) turns.push_back({t.hit, t.miss, t.gen});
  } else {
    for (const auto& a : w->agents)
      for (const auto& t : workload::all_turn_tokens(a))
        turns.push_back({static_cast<double>(t.hit), static_cast<double>(t.miss),
                         static_cast<double>(std::max<int64_t>(1, t.gen))});
  }
  SloFloor f;
  f.turns = static_cast<int64_t>(turns.size());
  const int64_t every = std::max<int64_t>(1, (f.turns + kMaxTurns - 1) / kMaxTurns);
  const cost::UnloadedLatency u(sc);
  std::vector<double> ttft, tpot;
  int64_t ttft_over = 0, tpot_over = 0;
  for (int64_t i = 0; i < f.turns; i += every) {
    const Tokens& t = turns[static_cast<size_t>(i)];
    const double a = u.ttft_s(t.hit, std::max(1.0, t.miss));
    ttft.push_back(a);
    ttft_over += a > sc.slo.ttft_s ? 1 : 0;
    if (t.gen > 1) {
      const double b = u.tpot_s(t.hit + std::max(1.0, t.miss));
      tpot.push_back(b);
      tpot_over += b > sc.slo.tpot_s ? 1 : 0;
    }
  }
  f.turns_sampled = static_cast<int64_t>(ttft.size());
  if (ttft.empty()) return f;
  f.ttft_over_share = static_cast<double>(ttft_over) / ttft.size();
  f.tpot_over_share = tpot.empty() ? 0.0 : static_cast<double>(tpot_over) / tpot.size();
  f.ttft_stat_s = metrics::distribution(ttft)[sc.slo.statistic].get<double>();
  f.tpot_stat_s = tpot.empty() ? 0.0 : metrics::distribution(tpot)[sc.slo.statistic].get<double>();
  if (sc.slo.relative()) return f;  // a relative SLO is met by any turn near its own floor
  if (f.ttft_stat_s > sc.slo.ttft_s) {
    f.unreachable = true;
    f.why = fmt::format(
        "no cluster size can meet slo.ttft_s = {:g} s: alone on an idle cluster, {:.1f}% of the workload's "
        "turns already take longer (unloaded TTFT), and their {} is {:.3g} s; judge against each turn's own "
        "latency instead (slo.mode = \"relative\") or raise the bound",
        sc.slo.ttft_s, 100 * f.ttft_over_share, sc.slo.statistic, f.ttft_stat_s);
  } else if (f.tpot_stat_s > sc.slo.tpot_s) {
    f.unreachable = true;
    f.why = fmt::format(
        "no cluster size can meet slo.tpot_s = {:g} s: a decode step holding one turn alone already takes "
        "longer for {:.1f}% of the workload's turns (unloaded TPOT), and their {} is {:.3g} s",
        sc.slo.tpot_s, 100 * f.tpot_over_share, sc.slo.statistic, f.tpot_stat_s);
  }
  return f;
}

}  // namespace sim::study
