#include "sim/cli/report.h"

#include <fmt/format.h>

namespace sim::cli {

namespace {

double num(const nlohmann::json& j, const char* a, const char* b = nullptr, const char* c = nullptr) {
  const nlohmann::json* p = &j;
  for (const char* k : {a, b, c}) {
    if (k == nullptr) break;
    if (!p->contains(k)) return 0;
    p = &(*p)[k];
  }
  return p->is_number() ? p->get<double>() : 0;
}

}  // namespace

std::string summary_table(const nlohmann::json& r) {
  std::string s;
  const auto& sum = r["summary"];
  if (sum.contains("setup")) {
    const auto& u = sum["setup"];
    s += fmt::format("model {}   engine {}   hardware {}{}\n", u.value("model", "?"), u.value("engine", "?"),
                     u.value("hardware", "?"),
                     u.contains("hardware_decode")
                         ? " (prefill), " + u.value("hardware_decode", "?") + " (decode)"
                         : std::string());
  }
  if (sum.contains("mtp") && num(sum, "mtp", "not_run_draft_tokens") > 0)
    s += fmt::format("MTP off: the engine's {:.0f} draft token(s) need a draft module, and {} has none\n",
                     num(sum, "mtp", "not_run_draft_tokens"), sum["setup"].value("model", "the model"));
  s += fmt::format("JCT {:.1f} s   turns {} / {}   agents {}\n", num(sum, "jct_s"),
                   sum["turns_completed"].get<int64_t>(), sum["turns_total"].get<int64_t>(),
                   sum["agents"].get<int64_t>());
  // An incomplete run's "JCT" is only the last finished turn: say so, and why the run ended.
  if (r.contains("complete") && !r["complete"].get<bool>())
    s += fmt::format("INCOMPLETE: stopped by {} at simulated t = {:.1f} s\n",
                     sum.value("stopped_by", std::string("?")), num(sum, "stopped_at_s"));
  s += fmt::format("TTFT mean {:.2f} s p99 {:.2f} s   TPOT mean {:.1f} ms   prompt tokens/s {:.0f}\n",
                   num(sum, "ttft_s", "mean"), num(sum, "ttft_s", "p99"), 1e3 * num(sum, "tpot_s", "mean"),
                   num(sum, "prompt_tokens_per_s"));
  if (sum.contains("cost") && sum["cost"].is_object()) {  // null: the hardware file gives no price
    const auto& c = sum["cost"];
    auto value = [&c](const char* k) {
      return c[k].is_number() ? fmt::format("{:.4g}", c[k].get<double>()) : "-";
    };
    s += fmt::format(
        "cost {} for the run ({} per hour for {} nodes)   per 1M tokens {}   per 1M generated {}   "
        "per agent task {}\n",
        value("run_cost"), value("cluster_per_hour"), value("nodes"), value("per_million_tokens"),
        value("per_million_gen_tokens"), value("per_agent_task"));
  }
  s += fmt::format("bottleneck: {} ({:.1f}% mean utilisation)\n",
                   r["bottleneck"]["resource"].get<std::string>(), 100 * num(r, "bottleneck", "utilization"));
  s += "mean utilisation by resource class:\n";
  for (const auto& [k, v] : r["resource_classes"].items())
    if (v.get<double>() > 0.0005) s += fmt::format("  {:<28} {:6.1f}%\n", k, 100 * v.get<double>());
  return s;
}

}  // namespace sim::cli
