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
  s += fmt::format("JCT {:.1f} s   turns {} / {}   agents {}\n", num(sum, "jct_s"),
                   sum["turns_completed"].get<int64_t>(), sum["turns_total"].get<int64_t>(),
                   sum["agents"].get<int64_t>());
  s += fmt::format("TTFT mean {:.2f} s p99 {:.2f} s   TPOT mean {:.1f} ms   prompt tokens/s {:.0f}\n",
                   num(sum, "ttft_s", "mean"), num(sum, "ttft_s", "p99"), 1e3 * num(sum, "tpot_s", "mean"),
                   num(sum, "prompt_tokens_per_s"));
  s += fmt::format("bottleneck: {} ({:.1f}% mean utilisation)\n",
                   r["bottleneck"]["resource"].get<std::string>(), 100 * num(r, "bottleneck", "utilization"));
  s += "mean utilisation by resource class:\n";
  for (const auto& [k, v] : r["resource_classes"].items())
    if (v.get<double>() > 0.0005) s += fmt::format("  {:<28} {:6.1f}%\n", k, 100 * v.get<double>());
  return s;
}

std::string compare_table(const std::vector<std::string>& names, const std::vector<nlohmann::json>& rs) {
  std::string s = fmt::format("{:<28}", "");
  for (const auto& n : names) s += fmt::format("{:>21}", n);
  s += "\n";
  auto row = [&](const std::string& label, auto value) {
    s += fmt::format("{:<28}", label);
    for (const auto& r : rs) s += fmt::format("{:>21}", value(r));
    s += "\n";
  };
  row("JCT (s)", [](const nlohmann::json& r) { return fmt::format("{:.1f}", num(r, "summary", "jct_s")); });
  row("TTFT mean (s)",
      [](const nlohmann::json& r) { return fmt::format("{:.2f}", num(r, "summary", "ttft_s", "mean")); });
  row("bottleneck", [](const nlohmann::json& r) { return r["bottleneck"]["resource"].get<std::string>(); });
  for (const char* k :
       {"prefill.storage.read", "decode.storage.read", "prefill.snic.in", "decode.snic.in", "decode.snic.out",
        "prefill.cnic.read", "prefill.cnic.write", "decode.cnic.read", "decode.cnic.write",
        "prefill.dram.shared", "decode.dram.shared", "prefill.gpu.compute", "decode.gpu.compute"}) {
    row(std::string(k) + " (%)",
        [k](const nlohmann::json& r) { return fmt::format("{:.1f}", 100 * num(r, "resource_classes", k)); });
  }
  return s;
}

}  // namespace sim::cli
