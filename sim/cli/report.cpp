#include "sim/cli/report.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "sim/cli/commands.h"

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

namespace {

// The metrics (lower is better: summary.jct_s, ttft_s mean and p99, tpot_s mean) in which B exceeds A by
// more than `tolerance` (a fraction, 0.02 = 2%), one line each with both values; empty = not worse.
std::vector<std::string> worse_metrics(const nlohmann::json& a, const nlohmann::json& b, double tolerance) {
  std::vector<std::string> worse;
  struct Metric {
    const char* label;
    const char* k1;
    const char* k2;
  };
  const Metric metrics[] = {{"summary.jct_s", "jct_s", nullptr},
                            {"summary.ttft_s.mean", "ttft_s", "mean"},
                            {"summary.ttft_s.p99", "ttft_s", "p99"},
                            {"summary.tpot_s.mean", "tpot_s", "mean"}};
  for (const auto& m : metrics) {
    const double va = num(a, "summary", m.k1, m.k2), vb = num(b, "summary", m.k1, m.k2);
    if (va > 0 && vb > va * (1 + tolerance))
      worse.push_back(fmt::format("{}: {:.4g} -> {:.4g} (+{:.1f}%, tolerance {:.1f}%)", m.label, va, vb,
                                  100 * (vb / va - 1), 100 * tolerance));
  }
  return worse;
}

}  // namespace

// `dpsim compare A B [--tolerance PERCENT]`: compare_table of A and B, then each metric in which B is
// worse beyond the tolerance; exit 1 when there is one.
void add_compare_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("compare", "Two results JSONs side by side; exit 1 when B is worse than A");
  static std::string a_path, b_path;
  static double tolerance = 2;
  cmd->add_option("a", a_path, "Results JSON A (the reference)")->required();
  cmd->add_option("b", b_path, "Results JSON B (the candidate)")->required();
  cmd->add_option("--tolerance", tolerance, "Percent by which B may be worse")->capture_default_str();
  cmd->callback([exit_code]() {
    std::vector<nlohmann::json> rs;
    for (const auto& p : {a_path, b_path}) {
      std::ifstream in(p);
      nlohmann::json j = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
      if (j.is_discarded() || !j.is_object() || !j.contains("summary") || !j["summary"].is_object() ||
          !j.contains("bottleneck") || !j.contains("resource_classes")) {
        std::fprintf(stderr, "dpsim: compare: %s: expected a results JSON of dpsim run\n", p.c_str());
        *exit_code = 2;
        return;
      }
      rs.push_back(std::move(j));
    }
    if (!(tolerance >= 0)) {
      std::fprintf(stderr, "dpsim: compare: --tolerance: expected a percentage >= 0, got %g\n", tolerance);
      *exit_code = 2;
      return;
    }
    std::printf("%s", compare_table({"A", "B"}, rs).c_str());
    const auto worse = worse_metrics(rs[0], rs[1], tolerance / 100);
    for (const auto& w : worse) std::printf("WORSE %s\n", w.c_str());
    std::printf("%s\n", worse.empty() ? "B is not worse than A beyond the tolerance" : "B is worse than A");
    *exit_code = worse.empty() ? 0 : 1;
  });
}

}  // namespace sim::cli
