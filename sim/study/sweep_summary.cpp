#include "sim/study/sweep_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "sim/platform/resource_class.h"
#include "sim/study/result_fields.h"

namespace sim::study {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

bool to_int(const std::string& s, int& out) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), ::isdigit)) return false;
  out = std::stoi(s);
  return out >= 1;
}

Status bad(const char* flag, const std::string& item, const char* expected) {
  return Status::error(fmt::format("{}: expected {}, got \"{}\"", flag, expected, item));
}

// A set-list value as JSON: numbers and booleans as such, anything else a string.
nlohmann::json value_json(const std::string& v) {
  nlohmann::json j = nlohmann::json::parse(v, nullptr, false);
  if (j.is_discarded() || !(j.is_number() || j.is_boolean())) return v;
  return j;
}

std::string name_part(const std::string& key, const std::string& value) {
  const bool letters = std::any_of(value.begin(), value.end(), ::isalpha);
  std::string s = letters ? value : key.substr(key.rfind('.') + 1) + value;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_') c = '_';
  return s;
}

struct ClassUse {
  double util = 0;
  int first_over = std::numeric_limits<int>::max();  // first busy interval above the threshold
};

// Per class "role.resource.direction": busy-part utilisation and first crossing of the threshold.
std::map<std::string, ClassUse> class_use(const nlohmann::json& r, double threshold) {
  const nlohmann::json& res = field(r, "resources");
  // Busy intervals from the SNIC-in series.
  std::vector<double> snic_in;
  for (const auto& e : field(res, platform::name(platform::ResourceClass::kSnic))) {
    if (field(e, "direction") != "in") continue;
    const nlohmann::json& s = field(e, "series");
    if (!s.is_array()) continue;
    if (snic_in.size() < s.size()) snic_in.resize(s.size(), 0.0);
    for (size_t i = 0; i < s.size(); ++i) snic_in[i] += number_or(s[i], 0);
  }
  const double peak = snic_in.empty() ? 0 : *std::max_element(snic_in.begin(), snic_in.end());
  std::vector<size_t> busy;
  for (size_t i = 0; i < snic_in.size(); ++i)
    if (peak > 0 && snic_in[i] >= kBusyFraction * peak) busy.push_back(i);

  std::map<std::string, ClassUse> use;
  std::map<std::string, int> n;
  for (const auto& [resource, links] : res.items()) {
    if (resource == platform::name(platform::ResourceClass::kGpu) ||
        resource == platform::name(platform::ResourceClass::kBuffer) || !links.is_array())
      continue;
    for (const auto& e : links) {
      const std::string key = fmt::format(
          "{}.{}.{}", field(e, "role").is_string() ? field(e, "role").get<std::string>() : "", resource,
          field(e, "direction").is_string() ? field(e, "direction").get<std::string>() : "");
      const nlohmann::json& s = field(e, "series");
      double u = number_or(field(e, "utilization"), 0);
      int first = std::numeric_limits<int>::max();
      if (!busy.empty() && s.is_array()) {
        double sum = 0;
        for (size_t k = 0; k < busy.size(); ++k) {
          const double x = busy[k] < s.size() ? number_or(s[busy[k]], 0) : 0;
          sum += x;
          if (x >= threshold && first == std::numeric_limits<int>::max()) first = static_cast<int>(k);
        }
        u = sum / static_cast<double>(busy.size());
      } else if (u >= threshold) {
        first = 0;
      }
      use[key].util += u;
      use[key].first_over = std::min(use[key].first_over, first);
      n[key]++;
    }
  }
  for (auto& [k, v] : use) v.util /= n[k];
  const std::string gpu_key =
      platform::class_key(platform::NodeRole::kPrefill, platform::ResourceClass::kGpu, "compute");
  const double gpu = number_or(field(field(r, "resource_classes"), gpu_key.c_str()), 0);
  use[gpu_key] = {gpu, gpu >= threshold ? 0 : std::numeric_limits<int>::max()};
  return use;
}

nlohmann::json range_json(const std::vector<double>& pds) {
  if (pds.empty()) return {{"pd_min", nullptr}, {"pd_max", nullptr}};
  return {{"pd_min", *std::min_element(pds.begin(), pds.end())},
          {"pd_max", *std::max_element(pds.begin(), pds.end())}};
}

std::string csv_cell(const nlohmann::json& j) {
  if (j.is_null()) return "";
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    return s.find_first_of(",\"") == std::string::npos ? s : "\"" + s + "\"";
  }
  return j.dump();
}

}  // namespace

StatusOr<std::vector<GridPoint>> parse_pd_list(const std::string& text) {
  std::vector<GridPoint> out;
  for (const auto& item : split(text, ',')) {
    const auto parts = split(item, ':');
    GridPoint g;
    if (parts.size() != 2 || !to_int(parts[0], g.p) || !to_int(parts[1], g.d))
      return bad("--pd", item, "P:D with integers >= 1, e.g. 1:7");
    out.push_back(g);
  }
  if (out.empty()) return bad("--pd", text, "a list of P:D pairs");
  return out;
}

StatusOr<std::vector<GridPoint>> parse_ratios(const std::string& text, int nodes) {
  if (nodes < 2) return Status::error(fmt::format("--nodes: expected an integer >= 2, got {}", nodes));
  std::vector<GridPoint> out;
  for (const auto& item : split(text, ',')) {
    const auto parts = split(item, '/');
    int a = 0, b = 1;
    if (parts.empty() || parts.size() > 2 || !to_int(parts[0], a) ||
        (parts.size() == 2 && !to_int(parts[1], b)))
      return bad("--ratios", item, "a ratio a/b or an integer, e.g. 1/7 or 5");
    const int g = std::gcd(a, b);
    a /= g;
    b /= g;
    const int k = nodes / (a + b);
    if (k >= 1) {
      out.push_back({k * a, k * b});
      continue;
    }
    const double r = static_cast<double>(a) / b;
    GridPoint best{1, nodes - 1};
    for (int p = 1; p < nodes; ++p)
      if (std::fabs(std::log(static_cast<double>(p) / (nodes - p) / r)) <
          std::fabs(std::log(static_cast<double>(best.p) / best.d / r)))
        best = {p, nodes - p};
    out.push_back(best);
  }
  if (out.empty()) return bad("--ratios", text, "a list of ratios, e.g. 1/7,1,7/2");
  return out;
}

StatusOr<std::vector<GridPoint>> parse_p_range(const std::string& text, int d) {
  if (d < 1) return Status::error(fmt::format("--d: expected an integer >= 1, got {}", d));
  std::vector<GridPoint> out;
  const size_t dots = text.find("..");
  if (dots != std::string::npos) {
    int lo = 0, hi = 0;
    if (!to_int(text.substr(0, dots), lo) || !to_int(text.substr(dots + 2), hi) || hi < lo)
      return bad("--p", text, "a range lo..hi of integers 1 <= lo <= hi");
    for (int p = lo; p <= hi; ++p) out.push_back({p, d});
    return out;
  }
  for (const auto& item : split(text, ',')) {
    int p = 0;
    if (!to_int(item, p)) return bad("--p", item, "an integer >= 1 (or a range lo..hi)");
    out.push_back({p, d});
  }
  if (out.empty()) return bad("--p", text, "a list or a range lo..hi of integers >= 1");
  return out;
}

StatusOr<SetList> parse_set_list(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return bad("--set-list", text, "key.path=v1,v2,...");
  SetList l{text.substr(0, eq), split(text.substr(eq + 1), ',')};
  for (const auto& v : l.values)
    if (v.empty()) return bad("--set-list", text, "non-empty values separated by commas");
  return l;
}

std::vector<SweepPoint> expand_grid(const std::vector<GridPoint>& grid, const std::vector<SetList>& lists) {
  std::vector<std::vector<std::pair<std::string, std::string>>> combos = {{}};
  for (const auto& l : lists) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& c : combos)
      for (const auto& v : l.values) {
        next.push_back(c);
        next.back().emplace_back(l.key, v);
      }
    combos = std::move(next);
  }
  std::vector<SweepPoint> out;
  std::set<std::string> seen;
  for (const auto& g : grid)
    for (const auto& c : combos) {
      SweepPoint p{fmt::format("p{}-d{}", g.p, g.d), g, c};
      for (const auto& [k, v] : c) p.name += "-" + name_part(k, v);
      const std::string base = p.name;
      for (int i = 2; !seen.insert(p.name).second; ++i) p.name = fmt::format("{}-{}", base, i);
      out.push_back(p);
    }
  return out;
}

nlohmann::json manifest_json(const std::string& scenario, double threshold,
                             const std::vector<GridPoint>& grid, const std::vector<SweepPoint>& points,
                             const nlohmann::json& analytic_range) {
  nlohmann::json j = {{"kind", "sweep-manifest"},
                      {"scenario", scenario},
                      {"threshold", threshold},
                      {"analytic_range", analytic_range}};
  j["grid"] = nlohmann::json::array();
  for (const auto& g : grid) j["grid"].push_back({{"P", g.p}, {"D", g.d}});
  j["points"] = nlohmann::json::array();
  for (const auto& p : points) {
    nlohmann::json sets = nlohmann::json::array();
    for (const auto& [k, v] : p.sets) sets.push_back({k, v});
    j["points"].push_back({{"name", p.name}, {"P", p.pd.p}, {"D", p.pd.d}, {"sets", sets}});
  }
  return j;
}

StatusOr<std::vector<SweepPoint>> points_of_manifest(const nlohmann::json& m, const std::string& file) {
  if (field(m, "kind") != "sweep-manifest" || !field(m, "points").is_array())
    return Status::error(fmt::format("{}: expected a sweep manifest (\"kind\": \"sweep-manifest\")", file));
  std::vector<SweepPoint> out;
  for (size_t i = 0; i < m["points"].size(); ++i) {
    const auto& p = m["points"][i];
    if (!field(p, "name").is_string() || !field(p, "P").is_number_integer() ||
        !field(p, "D").is_number_integer() || !field(p, "sets").is_array())
      return Status::error(fmt::format("{}: points[{}]: expected {{name, P, D, sets}}", file, i));
    SweepPoint s{p["name"].get<std::string>(), {p["P"].get<int>(), p["D"].get<int>()}, {}};
    for (const auto& kv : p["sets"]) {
      if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string() || !kv[1].is_string())
        return Status::error(fmt::format("{}: points[{}].sets: expected [key, value] string pairs", file, i));
      s.sets.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
    }
    out.push_back(s);
  }
  return out;
}

nlohmann::json point_summary(const SweepPoint& point, const nlohmann::json* result, double threshold,
                             const std::string& result_path) {
  nlohmann::json sets = nlohmann::json::object();
  for (const auto& [k, v] : point.sets) sets[k] = value_json(v);
  nlohmann::json j = {{"name", point.name}, {"P", point.pd.p},
                      {"D", point.pd.d},    {"pd", static_cast<double>(point.pd.p) / point.pd.d},
                      {"sets", sets},       {"result", result_path}};
  const char* kKeys[] = {"snic", "cnic_read", "cnic_write", "dram", "pcie", "gpu"};
  if (result == nullptr) {
    j["result"] = nullptr;
    j["jct_s"] = nullptr;
    for (const char* k : kKeys) j["utilization"][k] = nullptr;
    j["bottleneck"] = j["bottleneck_free"] = j["first_saturated"] = nullptr;
    return j;
  }
  const auto use = class_use(*result, threshold);
  auto get = [&](const std::string& k) { return use.count(k) ? use.at(k).util : 0.0; };
  using RC = platform::ResourceClass;
  const RC kCnic = RC::kCnic, kDram = RC::kDram, kGpu = RC::kGpu, kPcie = RC::kPcie, kSnic = RC::kSnic;
  const auto P = platform::NodeRole::kPrefill, D = platform::NodeRole::kDecode;
  auto key = [](platform::NodeRole r, platform::ResourceClass c, const char* d) {
    return platform::class_key(r, c, d);
  };
  // SNIC-in over all nodes: weight each role's class mean by its node count.
  const double snic = (get(key(P, kSnic, "in")) * point.pd.p + get(key(D, kSnic, "in")) * point.pd.d) /
                      static_cast<double>(point.pd.p + point.pd.d);
  const std::map<std::string, double> util = {
      {"snic", snic},
      {"cnic_read", std::max(get(key(P, kCnic, "read")), get(key(D, kCnic, "read")))},
      {"cnic_write", std::max(get(key(P, kCnic, "write")), get(key(D, kCnic, "write")))},
      {"dram", std::max(get(key(P, kDram, "shared")), get(key(D, kDram, "shared")))},
      {"pcie", std::max({get(key(P, kPcie, "to_gpu")), get(key(P, kPcie, "from_gpu")),
                         get(key(P, kPcie, "to_host")), get(key(P, kPcie, "from_host")),
                         get(key(D, kPcie, "to_gpu")), get(key(D, kPcie, "from_gpu")),
                         get(key(D, kPcie, "to_host")), get(key(D, kPcie, "from_host"))})},
      {"gpu", get(key(P, kGpu, "compute"))}};
  std::string bottleneck;
  double best = -1;
  for (const char* k : kKeys) {
    j["utilization"][k] = util.at(k);
    if (util.at(k) > best) best = util.at(k), bottleneck = k;
  }
  nlohmann::json classes = nlohmann::json::object();
  std::string first, highest;
  int first_at = std::numeric_limits<int>::max();
  double first_u = -1, highest_u = -1;
  for (const auto& [k, v] : use) {
    classes[k] = v.util;
    if (k.find(".snic.") != std::string::npos) continue;
    if (v.util > highest_u) highest_u = v.util, highest = k;
    const bool saturated = v.util >= threshold && v.util > snic + kTieMargin;
    if (saturated && (v.first_over < first_at || (v.first_over == first_at && v.util > first_u)))
      first = k, first_at = v.first_over, first_u = v.util;
  }
  const bool is_free = snic >= threshold && first.empty();
  j["jct_s"] = field(field(*result, "summary"), "jct_s");
  j["complete"] = field(*result, "complete");
  j["classes"] = classes;
  j["bottleneck"] = bottleneck;
  j["bottleneck_free"] = is_free;
  j["first_saturated"] = is_free ? nlohmann::json(nullptr) : nlohmann::json(first.empty() ? highest : first);
  return j;
}

nlohmann::json sweep_summary(const nlohmann::json& manifest, const std::vector<nlohmann::json>& points) {
  nlohmann::json j = {{"kind", "sweep"},
                      {"scenario", field(manifest, "scenario")},
                      {"threshold", field(manifest, "threshold")},
                      {"grid", field(manifest, "grid")},
                      {"analytic_range", field(manifest, "analytic_range")}};
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_sets;
  std::map<std::string, nlohmann::json> sets_of;
  for (const auto& p : points) {
    const std::string key = p["sets"].dump();
    sets_of[key] = p["sets"];
    by_sets[key];
    if (p["bottleneck_free"] == true) {
      all.push_back(p["pd"].get<double>());
      by_sets[key].push_back(p["pd"].get<double>());
    }
  }
  j["measured_range"] = range_json(all);
  j["measured_ranges"] = nlohmann::json::array();
  for (const auto& [key, pds] : by_sets) {
    nlohmann::json r = range_json(pds);
    r["sets"] = sets_of[key];
    j["measured_ranges"].push_back(r);
  }
  j["points"] = points;
  return j;
}

std::string summary_csv(const nlohmann::json& summary) {
  std::vector<std::string> set_keys;
  for (const auto& p : summary["points"])
    for (const auto& [k, v] : p["sets"].items())
      if (std::find(set_keys.begin(), set_keys.end(), k) == set_keys.end()) set_keys.push_back(k);
  const char* kUtil[] = {"snic", "cnic_read", "cnic_write", "dram", "pcie", "gpu"};
  std::string s = "name,P,D,pd";
  for (const auto& k : set_keys) s += "," + k;
  s += ",jct_s";
  for (const char* k : kUtil) s += fmt::format(",util_{}", k);
  s += ",bottleneck,bottleneck_free,first_saturated\n";
  for (const auto& p : summary["points"]) {
    s += fmt::format("{},{},{},{:.6g}", p["name"].get<std::string>(), p["P"].dump(), p["D"].dump(),
                     p["pd"].get<double>());
    for (const auto& k : set_keys)
      s += "," + csv_cell(p["sets"].contains(k) ? p["sets"][k] : nlohmann::json());
    s += "," + csv_cell(p["jct_s"]);
    for (const char* k : kUtil) {
      const auto& u = p["utilization"][k];
      s += "," + (u.is_number() ? fmt::format("{:.4f}", u.get<double>()) : std::string());
    }
    s += "," + csv_cell(p["bottleneck"]) + "," + csv_cell(p["bottleneck_free"]) + "," +
         csv_cell(p["first_saturated"]) + "\n";
  }
  return s;
}

}  // namespace sim::study
