#include "sim/study/compare.h"

#include <fmt/format.h>

#include "sim/study/executor.h"
#include "sim/study/result_fields.h"

namespace sim::study {

namespace {

// The number at j.a.b.c (0 when missing or not a number).
double num(const nlohmann::json& j, const char* a, const char* b = nullptr, const char* c = nullptr) {
  const nlohmann::json* p = &j;
  for (const char* k : {a, b, c})
    if (k != nullptr) p = &field(*p, k);
  return number_or(*p);
}

}  // namespace

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

StatusOr<Outcome> run_compare(const CompareSpec& spec) {
  std::vector<nlohmann::json> rs;
  for (const auto& p : {spec.a, spec.b}) {
    nlohmann::json j = read_json_file(p);
    if (j.is_discarded() || !j.is_object() || !j.contains("summary") || !j["summary"].is_object() ||
        !j.contains("bottleneck") || !j.contains("resource_classes"))
      return Status::error(fmt::format("compare: {}: expected a results JSON of dpsim run", p));
    rs.push_back(std::move(j));
  }
  if (!(spec.tolerance >= 0))
    return Status::error(
        fmt::format("compare: --tolerance: expected a percentage >= 0, got {:g}", spec.tolerance));
  std::string t = compare_table({"A", "B"}, rs);
  const auto worse = worse_metrics(rs[0], rs[1], spec.tolerance / 100);
  for (const auto& w : worse) t += "WORSE " + w + "\n";
  t += worse.empty() ? "B is not worse than A beyond the tolerance\n" : "B is worse than A\n";
  return Outcome{t, worse.empty() ? Verdict::kPass : Verdict::kFail};
}

}  // namespace sim::study
