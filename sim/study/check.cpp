#include "sim/study/check.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "sim/study/executor.h"

namespace sim::study {

namespace fs = std::filesystem;

namespace {

// The value at a dotted key. Object keys may themselves contain dots ("resource_classes.prefill.snic.in"):
// at each level the longest run of segments that names a key wins. Array elements are numeric segments.
const nlohmann::json* lookup(const nlohmann::json& j, const std::vector<std::string>& segs, size_t from) {
  if (from == segs.size()) return &j;
  if (j.is_array()) {
    const std::string& s = segs[from];
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return nullptr;
    const size_t i = std::stoul(s);
    return i < j.size() ? lookup(j[i], segs, from + 1) : nullptr;
  }
  if (!j.is_object()) return nullptr;
  for (size_t end = segs.size(); end > from; --end) {
    std::string key = segs[from];
    for (size_t k = from + 1; k < end; ++k) key += "." + segs[k];
    auto it = j.find(key);
    if (it == j.end()) continue;
    if (const nlohmann::json* v = lookup(*it, segs, end)) return v;
  }
  return nullptr;
}

std::optional<double> value_at(const nlohmann::json& j, const std::string& key) {
  std::vector<std::string> segs;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1)
    segs.push_back(key.substr(start, dot - start));
  segs.push_back(key.substr(start));
  const nlohmann::json* v = lookup(j, segs, 0);
  if (v == nullptr || !(v->is_number() || v->is_boolean())) return std::nullopt;
  return v->is_boolean() ? (v->get<bool>() ? 1.0 : 0.0) : v->get<double>();
}

std::vector<std::string> strings(const nlohmann::json& a) {
  std::vector<std::string> out;
  if (a.is_array())
    for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}

// One child run (a `dpsim run` variant or a `dpsim sweep`) a band needs; shared by identical bands.
// clang-tidy's bugprone-exception-escape is a false positive here: clang-tidy 14 follows nlohmann::json's
// noexcept move and destructor into calls that can throw but that they never reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Variant {
  ChildJob job;  // job.result: the results JSON, or the sweep's summary.json
  bool sweep = false;
  int code = -1;
  nlohmann::json result;
};

std::string fmt_num(double x) {
  return fmt::format("{:.6g}", x);
}

std::string expected_text(const nlohmann::json& band) {
  const bool lo = band.contains("min"), hi = band.contains("max");
  if (lo && hi)
    return fmt::format("in [{}, {}]", fmt_num(band["min"].get<double>()), fmt_num(band["max"].get<double>()));
  return lo ? ">= " + fmt_num(band["min"].get<double>()) : "<= " + fmt_num(band["max"].get<double>());
}

class Checker {
 public:
  Checker(std::string dir, int jobs, const Console& console)
      : dir_(std::move(dir)), runs_(jobs, console), sweeps_(1, console), console_(console) {}

  // Registers the runs of one scenario's bands; returns the variant indices per band (1 or 2).
  std::vector<std::vector<size_t>> plan(const std::string& scenario, const nlohmann::json& expect) {
    std::vector<std::vector<size_t>> out;
    for (const auto& band : expect) {
      if (band.contains("ratio")) {
        out.push_back({run_variant(scenario, strings(band["ratio"][0])),
                       run_variant(scenario, strings(band["ratio"][1]))});
      } else if (band.contains("sweep")) {
        out.push_back({sweep_variant(scenario, band["sweep"])});
      } else {
        out.push_back({run_variant(
            scenario, band.contains("sets") ? strings(band["sets"]) : std::vector<std::string>{})});
      }
    }
    return out;
  }

  // Runs everything planned (plain runs first, at most `jobs` at a time, then the sweeps one by one, each
  // with `jobs` children). Returns false when a child failed (named on Console::err).
  bool run() {
    std::vector<ChildJob> runs, sweeps;
    std::vector<size_t> run_ix, sweep_ix;
    for (size_t i = 0; i < variants_.size(); ++i) {
      (variants_[i].sweep ? sweeps : runs).push_back(variants_[i].job);
      (variants_[i].sweep ? sweep_ix : run_ix).push_back(i);
    }
    const auto a = runs_.run(runs, OnEnd());
    const auto b = sweeps_.run(sweeps, OnEnd());
    for (size_t k = 0; k < a.size(); ++k) variants_[run_ix[k]].code = a[k].code;
    for (size_t k = 0; k < b.size(); ++k) variants_[sweep_ix[k]].code = b[k].code;
    bool ok = true;
    for (auto& v : variants_) {
      v.result = read_json_file(v.job.result);
      // A sweep exits 1 when a point failed; its summary still lists the points it has.
      if ((v.code != 0 && !(v.sweep && v.code == 1)) || v.result.is_discarded() || v.result.is_null()) {
        console_.err(fmt::format("dpsim: check: a run failed (exit {}): {}\n  log: {}\n", v.code,
                                 shell_line(v.job.args), v.job.log));
        ok = false;
      }
    }
    return ok;
  }

  const Variant& variant(size_t i) const { return variants_[i]; }

 private:
  size_t add(Variant v) {
    const std::string key = shell_line(v.job.args);
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    const std::string stem = fmt::format("{}/v{}", dir_, variants_.size());
    v.job.log = stem + ".log";
    if (v.sweep) {
      v.job.args.insert(v.job.args.end(), {"--out", stem, "--jobs", std::to_string(runs_.jobs())});
      v.job.result = stem + "/summary.json";
    } else {
      v.job.args.insert(v.job.args.end(), {"--out", stem + ".json"});
      v.job.result = stem + ".json";
    }
    index_[key] = variants_.size();
    variants_.push_back(std::move(v));
    return variants_.size() - 1;
  }

  size_t run_variant(const std::string& scenario, const std::vector<std::string>& sets) {
    Variant v;
    v.job.args = {self_exe(), "run", scenario, "--quiet", "--set", "sim.progress=false"};
    for (const auto& s : sets) v.job.args.insert(v.job.args.end(), {"--set", s});
    v.job.args.insert(v.job.args.end(), {"--set", kNoTimeline, "--set", kNoRequests});
    return add(std::move(v));
  }

  size_t sweep_variant(const std::string& scenario, const nlohmann::json& sw) {
    Variant v;
    v.sweep = true;
    auto& args = v.job.args;
    args = {self_exe(), "sweep", scenario};
    for (const char* k : {"pd", "ratios", "p"})
      if (sw.contains(k)) args.insert(args.end(), {std::string("--") + k, sw[k].get<std::string>()});
    for (const char* k : {"nodes", "d"})
      if (sw.contains(k)) args.insert(args.end(), {std::string("--") + k, sw[k].dump()});
    if (sw.contains("threshold")) args.insert(args.end(), {"--threshold", sw["threshold"].dump()});
    for (const auto& s : strings(sw.value("sets", nlohmann::json::array())))
      args.insert(args.end(), {"--set", s});
    return add(std::move(v));
  }

  std::string dir_;
  Executor runs_, sweeps_;
  const Console& console_;
  std::vector<Variant> variants_;
  std::map<std::string, size_t> index_;
};

std::string band_label(const nlohmann::json& band) {
  std::string s = band["key"].get<std::string>();
  if (band.contains("ratio"))
    s = fmt::format("{} ratio [{}] / [{}]", s, shell_line(strings(band["ratio"][0])),
                    shell_line(strings(band["ratio"][1])));
  else if (band.contains("sets"))
    s += " with " + shell_line(strings(band["sets"]));
  else if (band.contains("sweep"))
    s += " of sweep " + band["sweep"].dump();
  return s;
}

StatusOr<Outcome> check_in(const CheckSpec& spec, const std::string& out, const Console& console) {
  struct Item {
    std::string file;
    nlohmann::json expect;
    std::vector<std::vector<size_t>> variants;
  };
  std::vector<Item> items;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return Status::error(fmt::format("check: {}: cannot create the directory: {}", out, ec.message()));
  Checker checker(fs::absolute(out).lexically_normal().string(), spec.jobs, console);
  for (const auto& arg : spec.scenarios) {
    const std::string file = fs::absolute(resolve_path(arg, "")).lexically_normal().string();
    auto sc = config::load_scenario(file, {});
    if (!sc) return sc.status();
    if (sc->expect.is_null())
      return Status::error(
          fmt::format("check: {}: expect: expected an array of bands (the scenario has none)", arg));
    items.push_back({arg, sc->expect, checker.plan(file, sc->expect)});
  }
  if (!checker.run()) return Outcome{"", Verdict::kBadInput};
  std::string t;
  std::vector<std::string> broken;
  for (const auto& it : items) {
    t += it.file + "\n";
    for (size_t b = 0; b < it.expect.size(); ++b) {
      const auto& band = it.expect[b];
      const std::string key = band["key"].get<std::string>();
      std::optional<double> v = value_at(checker.variant(it.variants[b][0]).result, key);
      if (v && it.variants[b].size() == 2) {
        const std::optional<double> denom = value_at(checker.variant(it.variants[b][1]).result, key);
        v = denom && *denom != 0 ? std::optional<double>(*v / *denom) : std::nullopt;
      }
      const bool ok = v && (!band.contains("min") || *v >= band["min"].get<double>()) &&
                      (!band.contains("max") || *v <= band["max"].get<double>());
      const std::string line =
          fmt::format("{}: measured {}, expected {}", band_label(band),
                      v ? fmt_num(*v) : "(missing or not a number)", expected_text(band));
      t += fmt::format("  {} {}{}\n", ok ? "ok    " : "BROKEN", line,
                       band.contains("note") ? "  # " + band["note"].get<std::string>() : "");
      if (!ok) broken.push_back(it.file + ": expect[" + std::to_string(b) + "] " + line);
    }
  }
  if (broken.empty()) return Outcome{t + "all bands hold\n"};
  t += fmt::format("{} broken band(s):\n", broken.size());
  for (const auto& s : broken) t += "  " + s + "\n";
  return Outcome{t, Verdict::kFail};
}

}  // namespace

StatusOr<Outcome> run_check(const CheckSpec& spec, const Console& console) {
  std::string dir = spec.out;
  if (dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "dpsim-check-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return Status::error("check: cannot create a temporary directory");
    dir = tmpl;
  }
  auto outcome = check_in(spec, dir, console);
  std::error_code ec;
  if (spec.out.empty()) fs::remove_all(dir, ec);
  return outcome;
}

}  // namespace sim::study
