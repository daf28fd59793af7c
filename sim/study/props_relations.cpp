#include "sim/study/props_relations.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "sim/config/json_util.h"
#include "sim/core/paths.h"
#include "sim/study/result_fields.h"

namespace sim::study {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kRelations = {"completes",
                                             "invariants",
                                             "no_idle_storage",
                                             "no_idle_prefill_node",
                                             "oracle_is_bound",
                                             "dualpath_le_basic",
                                             "scheduler_vs_round_robin",
                                             "more_snic_no_slower",
                                             "more_storage_no_slower",
                                             "more_agents_no_faster"};

// ---- Spec parsing ----

Status bad(const std::string& file, const std::string& path, const std::string& expected,
           const nlohmann::json* got) {
  return Status::error(fmt::format("{}: {}: expected {}{}", file, path, expected,
                                   got ? ", got " + got->dump() : std::string()));
}

StatusOr<GridPoint> parse_point(const nlohmann::json& v, const std::string& file, const std::string& path) {
  const char* expected = "\"P:D\" with integers >= 1 (e.g. \"2:1\")";
  if (!v.is_string()) return bad(file, path, expected, &v);
  const std::string s = v.get<std::string>();
  const size_t colon = s.find(':');
  auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 6 && std::all_of(t.begin(), t.end(), ::isdigit);
  };
  if (colon == std::string::npos || !digits(s.substr(0, colon)) || !digits(s.substr(colon + 1)))
    return bad(file, path, expected, &v);
  GridPoint g{std::stoi(s.substr(0, colon)), std::stoi(s.substr(colon + 1))};
  if (g.p < 1 || g.d < 1) return bad(file, path, expected, &v);
  return g;
}

StatusOr<std::vector<GridPoint>> parse_points(const nlohmann::json* v, const std::string& file,
                                              const std::string& path) {
  if (v == nullptr || !v->is_array() || v->empty())
    return bad(file, path, "a non-empty array of \"P:D\" strings", v);
  std::vector<GridPoint> out;
  for (size_t i = 0; i < v->size(); ++i) {
    auto g = parse_point((*v)[i], file, fmt::format("{}[{}]", path, i));
    if (!g) return g.status();
    out.push_back(*g);
  }
  return out;
}

StatusOr<std::vector<std::string>> parse_strings(const nlohmann::json* v, const std::string& file,
                                                 const std::string& path, bool non_empty) {
  std::vector<std::string> out;
  if (v == nullptr) {
    if (non_empty) return bad(file, path, "a non-empty array of strings", v);
    return out;
  }
  if (!v->is_array() || (non_empty && v->empty())) return bad(file, path, "an array of strings", v);
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) return bad(file, fmt::format("{}[{}]", path, i), "a string", &(*v)[i]);
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
           c == '_';
  });
}

// ---- Reading results ----

double jct(const nlohmann::json& r) {
  return number_or(field(field(r, "summary"), "jct_s"));
}

std::string policy_field(const nlohmann::json& r, const char* k) {
  const nlohmann::json& v = field(field(field(r, "scenario"), "policy"), k);
  return v.is_string() ? v.get<std::string>() : "";
}

bool complete(const RunOutcome& o) {
  return o.code == 0 && field(o.result, "complete") == true &&
         field(field(o.result, "summary"), "stopped_by") == "all_turns_done";
}

// The roles whose nodes a read path reads on.
std::vector<std::string> reading_roles(const std::string& read_path) {
  if (read_path == "pe") return {"prefill"};
  if (read_path == "de") return {"decode"};
  if (read_path == "oracle") return {};
  return {"prefill", "decode"};
}

// Storage-bound: dpsim's bottleneck is a storage read or SNIC-in class, at >= `threshold` utilisation.
bool storage_bound(const nlohmann::json& r, double threshold) {
  const nlohmann::json& b = field(r, "bottleneck");
  const nlohmann::json& res = field(b, "resource");
  if (!res.is_string()) return false;
  const std::string s = res.get<std::string>();
  const bool storage = s.size() > 13 && (s.rfind(".storage.read") == s.size() - 13 ||
                                         (s.size() > 8 && s.rfind(".snic.in") == s.size() - 8));
  return storage && number_or(field(b, "utilization")) >= threshold;
}

// Sum of `key` per node over resources.<kind>[] entries with the given role (and direction, if any).
std::map<int, double> per_node(const nlohmann::json& r, const char* kind, const std::string& role,
                               const char* direction, const char* key) {
  std::map<int, double> out;
  for (const auto& e : field(field(r, "resources"), kind)) {
    if (field(e, "role") != role) continue;
    if (direction != nullptr && field(e, "direction") != direction) continue;
    out[static_cast<int>(number_or(field(e, "node")))] += number_or(field(e, key));
  }
  return out;
}

// min / mean of the values (1 when there are fewer than two or the mean is 0).
double min_over_mean(const std::vector<double>& v) {
  if (v.size() < 2) return 1;
  double sum = 0;
  for (double x : v) sum += x;
  if (sum <= 0) return 1;
  return *std::min_element(v.begin(), v.end()) / (sum / static_cast<double>(v.size()));
}

class Evaluator {
 public:
  Evaluator(const PropsSpec& spec, const std::vector<PropsRun>& runs, const std::vector<RunOutcome>& out)
      : spec_(spec), runs_(runs), out_(out) {}

  std::vector<PropsCheck> run() {
    for (size_t i = 0; i < runs_.size(); ++i)
      if (out_[i].code != -1) per_run(i);
    // Groups of base runs at one (scenario, P:D), in grid order.
    std::vector<std::vector<size_t>> groups;
    std::map<std::pair<size_t, std::pair<int, int>>, size_t> group_of;
    for (size_t i = 0; i < runs_.size(); ++i) {
      if (runs_[i].variant != "base" || !complete(out_[i])) continue;
      const auto key = std::make_pair(runs_[i].scenario, std::make_pair(runs_[i].pd.p, runs_[i].pd.d));
      auto it = group_of.find(key);
      if (it == group_of.end()) {
        it = group_of.emplace(key, groups.size()).first;
        groups.emplace_back();
      }
      groups[it->second].push_back(i);
    }
    for (const auto& g : groups) pairs(g);
    monotone();
    std::stable_sort(checks_.begin(), checks_.end(), [](const PropsCheck& a, const PropsCheck& b) {
      return rank(a.relation) < rank(b.relation);
    });
    return checks_;
  }

 private:
  static size_t rank(const std::string& relation) {
    return std::find(kRelations.begin(), kRelations.end(), relation) - kRelations.begin();
  }

  void add(const std::string& relation, std::vector<size_t> ix, double measured, double bound, bool at_most,
           std::string detail) {
    PropsCheck c;
    c.relation = relation;
    for (size_t i : ix) c.runs.push_back(runs_[i].name);
    c.measured = measured;
    c.bound = bound;
    c.at_most = at_most;
    c.ok = at_most ? measured <= bound : measured >= bound;
    c.detail = std::move(detail);
    if (!c.ok) explain(c, runs_[ix.front()]);
    checks_.push_back(std::move(c));
  }

  void explain(PropsCheck& c, const PropsRun& run) const {
    const std::string& label = spec_.scenarios[run.scenario].label;
    for (const auto& e : spec_.explained) {
      if (e.relation != c.relation || e.scenario != label) continue;
      if (!e.pd.empty() && std::none_of(e.pd.begin(), e.pd.end(), [&](const GridPoint& g) {
            return g.p == run.pd.p && g.d == run.pd.d;
          }))
        continue;
      if (c.at_most ? c.measured <= e.limit : c.measured >= e.limit) {
        c.explained = e.why;
        return;
      }
    }
  }

  void per_run(size_t i) {
    const RunOutcome& o = out_[i];
    const nlohmann::json& s = field(o.result, "summary");
    add("completes", {i}, complete(o) ? 1 : 0, 1, false,
        o.result.is_null()
            ? fmt::format("exit {}, no results JSON", o.code)
            : fmt::format("exit {}, stopped_by {}, {} of {} turns", o.code, field(s, "stopped_by").dump(),
                          number_or(field(s, "turns_completed")), number_or(field(s, "turns_total"))));
    if (o.result.is_null()) return;
    invariants(i);
    if (!complete(o)) return;
    const std::string read_path = policy_field(o.result, "read_path");
    if (storage_bound(o.result, spec_.storage_bound_utilization)) {
      std::vector<double> reads;
      for (const auto& role : reading_roles(read_path))
        for (const auto& [node, b] : per_node(o.result, "snic", role, "in", "bytes")) reads.push_back(b);
      if (reads.size() >= 2)
        add("no_idle_storage", {i}, min_over_mean(reads), spec_.starve_fraction, false,
            fmt::format("least node storage read / mean over the {} reading nodes ({})", reads.size(),
                        field(field(o.result, "bottleneck"), "resource").dump()));
    }
    std::vector<double> busy;
    for (const auto& [node, b] : per_node(o.result, "gpu", "prefill", nullptr, "busy_s")) busy.push_back(b);
    if (busy.size() >= 2)
      add("no_idle_prefill_node", {i}, min_over_mean(busy), spec_.starve_fraction, false,
          fmt::format("least prefill node GPU busy / mean over {} prefill nodes", busy.size()));
  }

  void invariants(size_t i) {
    const nlohmann::json& r = out_[i].result;
    const nlohmann::json& inv = field(r, "invariants");
    const bool oracle = policy_field(r, "read_path") == "oracle";
    const double expected = oracle ? 0 : number_or(field(inv, "hit_bytes_expected"));
    const double from_storage = oracle ? 0 : number_or(field(inv, "storage_bytes_expected"));
    auto rel_to = [](double x, double want) { return std::abs(x - want) / std::max(1.0, want); };
    auto rel = [&](double x) { return rel_to(x, expected); };
    double peak = 0;
    for (const auto& [kind, entries] : field(r, "resources").items())
      for (const auto& e : entries)
        if (e.contains("peak_utilization")) peak = std::max(peak, number_or(field(e, "peak_utilization")));
    const double held = complete(out_[i])
                            ? std::max(std::abs(number_or(field(inv, "de_hbm_held_at_end_bytes"))),
                                       std::abs(number_or(field(inv, "dram_buffer_held_at_end_bytes"))))
                            : 0;  // a run cut short still holds what its turns in flight hold
    // One check per run: the worst of the normalised errors, each against its own tolerance.
    // A run cut short has read and loaded only part of its hit bytes: those two wait for a complete run.
    const bool done = complete(out_[i]);
    const double worst =
        std::max({number_or(field(inv, "link_bytes_conservation_error")) / 1e-9,
                  done ? rel_to(number_or(field(inv, "storage_bytes_read")), from_storage) / 1e-6 : 0,
                  done ? rel(number_or(field(inv, "hit_bytes_loaded_to_pe"))) / 1e-6 : 0, (peak - 1) / 1e-6,
                  held / 1024});
    add("invariants", {i}, worst, 1, true,
        fmt::format("conservation error {:.3g} (<= 1e-9), storage read {:.6g} B vs {:.6g} B expected, "
                    "peak link utilisation {:.6f}, held at end {:.3g} B",
                    number_or(field(inv, "link_bytes_conservation_error")),
                    number_or(field(inv, "storage_bytes_read")), from_storage, peak, held));
  }

  std::string jct_detail(size_t a, size_t b) const {
    return fmt::format("JCT {:.1f} s ({}) / {:.1f} s ({})", jct(out_[a].result), runs_[a].policy,
                       jct(out_[b].result), runs_[b].policy);
  }

  void pairs(const std::vector<size_t>& g) {
    auto ratio = [&](size_t a, size_t b) {
      return jct(out_[a].result) / std::max(1e-12, jct(out_[b].result));
    };
    for (size_t a : g) {
      const std::string rp_a = policy_field(out_[a].result, "read_path");
      const std::string sc_a = policy_field(out_[a].result, "scheduler");
      for (size_t b : g) {
        if (a == b) continue;
        const std::string rp_b = policy_field(out_[b].result, "read_path");
        const std::string sc_b = policy_field(out_[b].result, "scheduler");
        if (rp_a == "oracle" && rp_b != "oracle" && sc_a == sc_b)
          add("oracle_is_bound", {a, b}, ratio(a, b), 1 + spec_.noise, true, jct_detail(a, b));
        if (rp_a == "dualpath" && rp_b == "pe" &&
            storage_bound(out_[b].result, spec_.storage_bound_utilization))
          add("dualpath_le_basic", {a, b}, ratio(a, b), 1 + spec_.noise, true, jct_detail(a, b));
        if (sc_a == "dualpath" && sc_b == "round_robin" && same_but_scheduler(a, b))
          add("scheduler_vs_round_robin", {a, b}, ratio(a, b), spec_.scheduler_ratio_max, true,
              jct_detail(a, b));
      }
    }
  }

  bool same_but_scheduler(size_t a, size_t b) const {
    nlohmann::json pa = field(field(out_[a].result, "scenario"), "policy");
    nlohmann::json pb = field(field(out_[b].result, "scenario"), "policy");
    if (!pa.is_object() || !pb.is_object()) return false;
    pa.erase("scheduler");
    pb.erase("scheduler");
    return pa == pb;
  }

  void monotone() {
    std::map<std::tuple<size_t, int, int, std::string>, size_t> base;
    for (size_t i = 0; i < runs_.size(); ++i)
      if (runs_[i].variant == "base" && complete(out_[i]))
        base[{runs_[i].scenario, runs_[i].pd.p, runs_[i].pd.d, runs_[i].policy}] = i;
    for (size_t i = 0; i < runs_.size(); ++i) {
      const PropsRun& v = runs_[i];
      if (v.variant == "base" || !complete(out_[i])) continue;
      auto it = base.find({v.scenario, v.pd.p, v.pd.d, v.policy});
      if (it == base.end()) continue;
      const size_t b = it->second;
      const double r = jct(out_[i].result) / std::max(1e-12, jct(out_[b].result));
      const std::string detail = fmt::format("JCT {:.1f} s ({}) / {:.1f} s (base)", jct(out_[i].result),
                                             v.variant, jct(out_[b].result));
      if (v.variant == "snic") add("more_snic_no_slower", {i, b}, r, 1 + spec_.noise, true, detail);
      if (v.variant == "storage") add("more_storage_no_slower", {i, b}, r, 1 + spec_.noise, true, detail);
      if (v.variant == "agents") add("more_agents_no_faster", {i, b}, r, 1 - spec_.noise, false, detail);
    }
  }

  const PropsSpec& spec_;
  const std::vector<PropsRun>& runs_;
  const std::vector<RunOutcome>& out_;
  std::vector<PropsCheck> checks_;
};

nlohmann::json check_json(const PropsCheck& c, const std::map<std::string, std::string>& paths) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : c.runs) runs.push_back({{"name", r}, {"result", paths.count(r) ? paths.at(r) : ""}});
  nlohmann::json j = {{"relation", c.relation},        {"runs", runs},
                      {"measured", c.measured},        {"bound", c.bound},
                      {"op", c.at_most ? "<=" : ">="}, {"detail", c.detail}};
  if (!c.explained.empty()) j["explained"] = c.explained;
  return j;
}

}  // namespace

StatusOr<PropsSpec> parse_props_spec(const nlohmann::json& j, const std::string& file) {
  PropsSpec spec;
  spec.file = file;
  const std::string dir = fs::path(file).parent_path().string();
  config::JsonReader r(j, file, "");
  spec.name = r.string("name", fs::path(file).stem().string());
  spec.description = r.string("description", "");
  std::vector<GridPoint> default_pd;
  if (const nlohmann::json* pd = r.raw("pd")) {
    auto p = parse_points(pd, file, "pd");
    if (!p) return p.status();
    default_pd = *p;
  }
  auto sets = parse_strings(r.raw("sets"), file, "sets", false);
  if (!sets) return sets.status();
  spec.sets = *sets;

  const nlohmann::json* scen = r.raw("scenarios");
  if (scen == nullptr || !scen->is_array() || scen->empty())
    return bad(file, "scenarios", "a non-empty array of {\"file\", \"pd\"} objects", scen);
  std::set<std::string> labels;
  for (size_t i = 0; i < scen->size(); ++i) {
    const std::string path = fmt::format("scenarios[{}]", i);
    const nlohmann::json& s = (*scen)[i];
    if (!s.is_object()) return bad(file, path, "an object {\"file\", \"pd\"}", &s);
    config::JsonReader sr(s, file, path);
    PropsScenario ps;
    const std::string f = sr.string("file", std::nullopt);
    if (!sr.ok()) return sr.finish();
    ps.file = absolute_path(resolve_path(f, dir));
    if (!fs::is_regular_file(ps.file))
      return Status::error(fmt::format("{}: {}.file: cannot open {}: no such file", file, path, f));
    ps.label = fs::path(ps.file).stem().string();
    if (!labels.insert(ps.label).second)
      return Status::error(fmt::format("{}: {}.file: a second scenario named {}", file, path, ps.label));
    if (const nlohmann::json* pd = sr.raw("pd")) {
      auto p = parse_points(pd, file, path + ".pd");
      if (!p) return p.status();
      ps.pd = *p;
    } else if (default_pd.empty()) {
      return bad(file, path + ".pd", "P:D points (here or in the grid's \"pd\")", nullptr);
    } else {
      ps.pd = default_pd;
    }
    if (Status st = sr.finish(); !st.is_ok()) return st;
    spec.scenarios.push_back(std::move(ps));
  }

  const nlohmann::json* pol = r.raw("policies");
  if (pol == nullptr || !pol->is_array() || pol->empty())
    return bad(file, "policies", "a non-empty array of {\"name\", \"sets\"} objects", pol);
  for (size_t i = 0; i < pol->size(); ++i) {
    const std::string path = fmt::format("policies[{}]", i);
    if (!(*pol)[i].is_object()) return bad(file, path, "an object {\"name\", \"sets\"}", &(*pol)[i]);
    config::JsonReader pr((*pol)[i], file, path);
    PropsPolicy p;
    p.name = pr.string("name", std::nullopt);
    if (!pr.ok()) return pr.finish();
    if (!valid_name(p.name)) return bad(file, path + ".name", "a name of [a-z0-9_]", &(*pol)[i]["name"]);
    for (const auto& q : spec.policies)
      if (q.name == p.name)
        return Status::error(fmt::format("{}: {}.name: \"{}\" twice", file, path, p.name));
    auto ps = parse_strings(pr.raw("sets"), file, path + ".sets", false);
    if (!ps) return ps.status();
    p.sets = *ps;
    if (Status st = pr.finish(); !st.is_ok()) return st;
    spec.policies.push_back(std::move(p));
  }

  r.object("monotone", [&](config::JsonReader& m) {
    spec.snic_factor = m.number("snic_factor", 2.0, 1, 1e3, false);
    spec.storage_factor = m.number("storage_factor", 2.0, 1, 1e3, false);
    spec.agents_factor = m.number("agents_factor", 2.0, 1, 1e3, false);
    auto names = parse_strings(m.raw("policies"), file, "monotone.policies", false);
    if (!names) return m.fail_message(names.status().message());
    for (const auto& n : *names) {
      if (std::none_of(spec.policies.begin(), spec.policies.end(),
                       [&](const PropsPolicy& p) { return p.name == n; }))
        return m.fail_message(
            fmt::format("{}: monotone.policies: \"{}\" is not one of the grid's policies", file, n));
      spec.monotone_policies.push_back(n);
    }
  });
  r.object("tolerances", [&](config::JsonReader& t) {
    spec.noise = t.number("noise", spec.noise, 0, 1);
    spec.starve_fraction = t.number("starve_fraction", spec.starve_fraction, 0, 1);
    spec.scheduler_ratio_max = t.number("scheduler_ratio_max", spec.scheduler_ratio_max, 1, 1e3);
    spec.storage_bound_utilization = t.fraction("storage_bound_utilization", spec.storage_bound_utilization);
  });
  if (const nlohmann::json* ex = r.raw("explained")) {
    if (!ex->is_array()) return bad(file, "explained", "an array of explanations", ex);
    for (size_t i = 0; i < ex->size(); ++i) {
      const std::string path = fmt::format("explained[{}]", i);
      if (!(*ex)[i].is_object()) return bad(file, path, "an object", &(*ex)[i]);
      config::JsonReader er((*ex)[i], file, path);
      PropsExplained e;
      e.relation = er.one_of("relation", std::nullopt, kRelations);
      e.scenario = er.string("scenario", std::nullopt);
      e.why = er.string("why", std::nullopt);
      e.limit = er.number("limit", std::nullopt, 0, 1e3);
      if (!er.ok()) return er.finish();
      if (!labels.count(e.scenario))
        return bad(file, path + ".scenario", "the stem of one of the grid's scenarios",
                   &(*ex)[i]["scenario"]);
      if (const nlohmann::json* pd = er.raw("pd")) {
        auto p = parse_points(pd, file, path + ".pd");
        if (!p) return p.status();
        e.pd = *p;
      }
      if (Status st = er.finish(); !st.is_ok()) return st;
      spec.explained.push_back(std::move(e));
    }
  }
  if (Status st = r.finish(); !st.is_ok()) return st;
  return spec;
}

std::vector<PropsRun> expand_props(const PropsSpec& spec) {
  std::vector<PropsRun> out;
  for (size_t s = 0; s < spec.scenarios.size(); ++s)
    for (const auto& pd : spec.scenarios[s].pd)
      for (const auto& p : spec.policies) {
        const bool mono = std::find(spec.monotone_policies.begin(), spec.monotone_policies.end(), p.name) !=
                          spec.monotone_policies.end();
        for (const char* v : {"base", "snic", "storage", "agents"}) {
          if (!mono && std::string(v) != "base") continue;
          out.push_back({fmt::format("{}.p{}d{}.{}.{}", spec.scenarios[s].label, pd.p, pd.d, p.name, v), s,
                         pd, p.name, v});
        }
      }
  return out;
}

std::vector<PropsCheck> evaluate_props(const PropsSpec& spec, const std::vector<PropsRun>& runs,
                                       const std::vector<RunOutcome>& outcomes) {
  return Evaluator(spec, runs, outcomes).run();
}

nlohmann::json props_report(const PropsSpec& spec, const std::vector<PropsRun>& runs,
                            const std::vector<RunOutcome>& outcomes, const std::vector<PropsCheck>& checks,
                            const std::vector<std::string>& skipped) {
  std::map<std::string, std::string> paths;
  for (size_t i = 0; i < runs.size(); ++i) paths[runs[i].name] = outcomes[i].path;
  nlohmann::json rel = nlohmann::json::array(), violations = nlohmann::json::array(),
                 explained = nlohmann::json::array();
  for (const auto& name : kRelations) {
    int n = 0, bad_n = 0, ex_n = 0;
    for (const auto& c : checks) {
      if (c.relation != name) continue;
      ++n;
      if (!c.ok) (c.explained.empty() ? bad_n : ex_n)++;
    }
    rel.push_back({{"name", name}, {"checks", n}, {"violations", bad_n}, {"explained", ex_n}});
  }
  for (const auto& c : checks)
    if (!c.ok) (c.explained.empty() ? violations : explained).push_back(check_json(c, paths));
  int ran = 0;
  for (const auto& o : outcomes) ran += o.code != -1;
  return {{"kind", "props"},
          {"grid", spec.file},
          {"name", spec.name},
          {"runs", ran},
          {"skipped", skipped},
          {"relations", rel},
          {"violations", violations},
          {"explained", explained},
          {"tolerances",
           {{"noise", spec.noise},
            {"starve_fraction", spec.starve_fraction},
            {"scheduler_ratio_max", spec.scheduler_ratio_max},
            {"storage_bound_utilization", spec.storage_bound_utilization}}}};
}

}  // namespace sim::study
