// The pure half of `dpsim props` (sim/study/props_relations.h): the grid file, the runs it expands to, and
// each relation on hand-made results, each with a case that holds and one that breaks.
#include "sim/study/props_relations.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/core/paths.h"

using sim::study::evaluate_props;
using sim::study::PropsCheck;
using sim::study::PropsRun;
using sim::study::PropsSpec;
using sim::study::RunOutcome;

namespace {

// A grid file "located" in scenarios/props/, so that its scenario paths resolve as the real grid's do.
std::string grid_file() {
  return std::string(sim::project_root()) + "/scenarios/props/test-grid.json";
}

nlohmann::json minimal_grid() {
  return nlohmann::json::parse(R"({
    "scenarios": [{"file": "../paper/ds27b-64k.json", "pd": ["1:1", "2:1"]}],
    "policies": [{"name": "basic", "sets": ["policy.read_path=pe"]},
                 {"name": "dualpath", "sets": ["policy.read_path=dualpath"]}],
    "monotone": {"policies": ["dualpath"]}
  })");
}

std::string props_spec_error(const nlohmann::json& j) {
  auto s = sim::study::parse_props_spec(j, grid_file());
  return s.is_ok() ? "" : s.status().message();
}

// A results JSON with what the relations read. Nodes: `busy` per prefill node, then `reads` (SNIC-in bytes)
// per node in the order prefill nodes, decode nodes; `p` prefill nodes.
struct Fake {
  std::string read_path = "dualpath", scheduler = "round_robin";
  double jct = 100;
  std::string bottleneck = "prefill.storage.read";
  double bottleneck_util = 0.9;
  int p = 1;
  std::vector<double> reads = {10, 10};
  std::vector<double> busy = {5};
  std::string stopped_by = "all_turns_done";
  double conservation = 0;
};

nlohmann::json fake_result(const Fake& f) {
  nlohmann::json r;
  r["complete"] = f.stopped_by == "all_turns_done";
  r["summary"] = {
      {"jct_s", f.jct}, {"stopped_by", f.stopped_by}, {"turns_completed", 10}, {"turns_total", 10}};
  r["scenario"]["policy"] = {{"read_path", f.read_path}, {"scheduler", f.scheduler}, {"layerwise", true}};
  r["bottleneck"] = {{"resource", f.bottleneck}, {"utilization", f.bottleneck_util}};
  const double hit = f.read_path == "oracle" ? 0 : 20;
  r["invariants"] = {{"link_bytes_conservation_error", f.conservation},
                     {"storage_bytes_read", hit},
                     {"hit_bytes_expected", 20.0},
                     {"storage_bytes_expected", 20.0},
                     {"hit_bytes_loaded_to_pe", hit},
                     {"de_hbm_held_at_end_bytes", 0.0},
                     {"dram_buffer_held_at_end_bytes", 0.0}};
  r["resources"]["snic"] = nlohmann::json::array();
  for (size_t n = 0; n < f.reads.size(); ++n)
    r["resources"]["snic"].push_back({{"node", n},
                                      {"role", static_cast<int>(n) < f.p ? "prefill" : "decode"},
                                      {"direction", "in"},
                                      {"bytes", f.reads[n]},
                                      {"peak_utilization", 0.5}});
  r["resources"]["gpu"] = nlohmann::json::array();
  for (size_t n = 0; n < f.busy.size(); ++n)
    r["resources"]["gpu"].push_back({{"node", n}, {"role", "prefill"}, {"busy_s", f.busy[n]}});
  return r;
}

// A spec and runs built by hand (no files): one scenario, one P:D point.
struct Grid {
  PropsSpec spec;
  std::vector<PropsRun> runs;
  std::vector<RunOutcome> out;
  Grid() { spec.scenarios.push_back({"x.json", "x", {{1, 1}}}); }
  void add(const std::string& policy, const Fake& f, const std::string& variant = "base", int code = 0) {
    runs.push_back({"x.p1d1." + policy + "." + variant, 0, {1, 1}, policy, variant});
    out.push_back({code, fake_result(f), ""});
  }
  std::vector<PropsCheck> of(const std::string& relation) const {
    std::vector<PropsCheck> v;
    for (const auto& c : evaluate_props(spec, runs, out))
      if (c.relation == relation) v.push_back(c);
    return v;
  }
};

}  // namespace

TEST_CASE("Props grid file: a valid grid -> scenarios, policies and defaults, runs with variants", "[unit]") {
  auto s = sim::study::parse_props_spec(minimal_grid(), grid_file());
  REQUIRE(s.is_ok());
  CHECK(s->name == "test-grid");
  REQUIRE(s->scenarios.size() == 1);
  CHECK(s->scenarios[0].label == "ds27b-64k");
  CHECK(s->scenarios[0].pd.size() == 2);
  CHECK(s->noise == 0.03);
  CHECK(s->scheduler_ratio_max == 1.05);
  const auto runs = sim::study::expand_props(*s);
  // 2 points x (basic: base; dualpath: base + snic + storage + agents).
  REQUIRE(runs.size() == 10);
  CHECK(runs[0].name == "ds27b-64k.p1d1.basic.base");
  CHECK(runs[1].name == "ds27b-64k.p1d1.dualpath.base");
  CHECK(runs[4].name == "ds27b-64k.p1d1.dualpath.agents");
  CHECK(runs[9].name == "ds27b-64k.p2d1.dualpath.agents");
}

TEST_CASE("Props grid file: bad input -> an error naming the file, the field and what was expected",
          "[unit]") {
  auto with = [](const char* key, const nlohmann::json& v) {
    nlohmann::json j = minimal_grid();
    j[key] = v;
    return props_spec_error(j);
  };
  CHECK(with("nope", 1).find("test-grid.json: nope") != std::string::npos);
  CHECK(with("pd", {"2-1"}).find("pd[0]: expected \"P:D\"") != std::string::npos);
  CHECK(with("monotone", {{"policies", {"oracle"}}}).find("\"oracle\" is not one of the grid's policies") !=
        std::string::npos);
  CHECK(with("tolerances", {{"noise", -0.1}}).find("tolerances.noise") != std::string::npos);
  CHECK(
      with("explained", {{{"relation", "completes"}, {"scenario", "elsewhere"}, {"why", "x"}, {"limit", 1}}})
          .find("explained[0].scenario") != std::string::npos);
  CHECK(with("explained", {{{"relation", "fast"}, {"scenario", "ds27b-64k"}, {"why", "x"}, {"limit", 1}}})
            .find("explained[0].relation") != std::string::npos);
  nlohmann::json dup = minimal_grid();
  dup["policies"][1]["name"] = "basic";
  CHECK(props_spec_error(dup).find("policies[1].name: \"basic\" twice") != std::string::npos);
  nlohmann::json missing = minimal_grid();
  missing["scenarios"][0]["file"] = "../paper/none.json";
  CHECK(props_spec_error(missing).find("scenarios[0].file: cannot open") != std::string::npos);
  nlohmann::json no_pd = minimal_grid();
  no_pd["scenarios"][0].erase("pd");
  CHECK(props_spec_error(no_pd).find("scenarios[0].pd") != std::string::npos);
}

TEST_CASE("Props oracle_is_bound: oracle 3% slower holds (noise), 4% slower breaks, other schedulers apart",
          "[unit]") {
  Grid g;
  Fake o, d;
  o.read_path = "oracle";
  o.jct = 103;
  d.jct = 100;
  g.add("oracle", o);
  g.add("dualpath", d);
  Fake od = o;  // an oracle run with another scheduler is not compared with the round_robin runs
  od.scheduler = "dualpath";
  od.jct = 500;
  g.add("oracle_dp", od);
  auto c = g.of("oracle_is_bound");
  REQUIRE(c.size() == 1);
  CHECK(c[0].ok);
  CHECK(c[0].measured == Approx(1.03));
  g.out[0].result["summary"]["jct_s"] = 104.0;
  c = g.of("oracle_is_bound");
  REQUIRE(c.size() == 1);
  CHECK_FALSE(c[0].ok);
  CHECK(c[0].runs == std::vector<std::string>{"x.p1d1.oracle.base", "x.p1d1.dualpath.base"});
}

TEST_CASE("Props dualpath_le_basic: checked only when Basic is storage-bound", "[unit]") {
  Grid g;
  Fake b, d;
  b.read_path = "pe";
  b.jct = 100;
  d.jct = 110;  // slower than Basic
  g.add("basic", b);
  g.add("dualpath", d);
  auto c = g.of("dualpath_le_basic");
  REQUIRE(c.size() == 1);
  CHECK_FALSE(c[0].ok);
  CHECK(c[0].measured == Approx(1.1));
  g.out[0].result["bottleneck"]["utilization"] = 0.5;  // Basic not storage-bound: no claim
  CHECK(g.of("dualpath_le_basic").empty());
  g.out[0].result["bottleneck"] = {{"resource", "decode.cnic.write"}, {"utilization", 0.95}};
  CHECK(g.of("dualpath_le_basic").empty());
}

TEST_CASE("Props scheduler_vs_round_robin: 1.06 breaks 1.05, an explanation covers it up to its limit only",
          "[unit]") {
  Grid g;
  Fake rr, dp;
  rr.jct = 100;
  dp.scheduler = "dualpath";
  dp.jct = 106;
  g.add("dualpath_rr", rr);
  g.add("dualpath", dp);
  auto c = g.of("scheduler_vs_round_robin");
  REQUIRE(c.size() == 1);
  CHECK_FALSE(c[0].ok);
  CHECK(c[0].explained.empty());
  g.spec.explained.push_back(
      {"scheduler_vs_round_robin", "x", "HBM promised before the read", {{1, 1}}, 1.10});
  c = g.of("scheduler_vs_round_robin");
  CHECK(c[0].explained == "HBM promised before the read");
  g.out[1].result["summary"]["jct_s"] = 112.0;  // beyond the explained limit: a violation again
  CHECK(g.of("scheduler_vs_round_robin")[0].explained.empty());
  g.spec.explained[0].pd = {{2, 1}};  // the explanation is for another point
  g.out[1].result["summary"]["jct_s"] = 106.0;
  CHECK(g.of("scheduler_vs_round_robin")[0].explained.empty());
  // Runs whose policies differ in more than the scheduler are not a pair.
  g.out[1].result["scenario"]["policy"]["layerwise"] = false;
  CHECK(g.of("scheduler_vs_round_robin").empty());
}

TEST_CASE(
    "Props no_idle_storage: a reading node below half the mean breaks it, non-reading nodes do not count",
    "[unit]") {
  Grid g;
  Fake d;
  d.p = 2;
  d.reads = {0, 10, 10};  // prefill node 0 reads nothing while storage binds
  d.busy = {5, 5};
  g.add("dualpath", d);
  auto c = g.of("no_idle_storage");
  REQUIRE(c.size() == 1);
  CHECK_FALSE(c[0].ok);
  CHECK(c[0].measured == Approx(0));
  g.out[0].result["resources"]["snic"][0]["bytes"] = 4.0;  // 4 / 8 = 0.5: at the bound, holds
  CHECK(g.of("no_idle_storage")[0].ok);
  // Basic reads on the prefill nodes only: an idle decode SNIC is its design, not a starved node.
  Grid b;
  Fake pe = d;
  pe.read_path = "pe";
  pe.reads = {10, 10, 0};
  b.add("basic", pe);
  c = b.of("no_idle_storage");
  REQUIRE(c.size() == 1);
  CHECK(c[0].ok);
  // Not storage-bound: no claim.
  b.out[0].result["bottleneck"]["utilization"] = 0.3;
  CHECK(b.of("no_idle_storage").empty());
}

TEST_CASE("Props no_idle_prefill_node, completes, invariants: each breaks on its defect", "[unit]") {
  Grid g;
  Fake d;
  d.p = 2;
  d.reads = {10, 10, 10};
  d.busy = {10, 1};  // 1 / 5.5 = 0.18 of the mean
  g.add("dualpath", d);
  Fake stalled;
  stalled.stopped_by = "stall";
  g.add("basic", stalled, "base", 3);
  Fake leaky;
  leaky.conservation = 1e-6;
  g.add("oracle", leaky);
  auto idle = g.of("no_idle_prefill_node");
  REQUIRE(idle.size() == 1);
  CHECK_FALSE(idle[0].ok);
  CHECK(idle[0].measured == Approx(1 / 5.5));
  auto done = g.of("completes");
  REQUIRE(done.size() == 3);
  CHECK(done[0].ok);
  CHECK_FALSE(done[1].ok);
  CHECK(done[1].detail.find("stall") != std::string::npos);
  auto inv = g.of("invariants");
  REQUIRE(inv.size() == 3);
  CHECK(inv[0].ok);
  CHECK(inv[1].ok);  // cut short: its partial reads are not held against it, only conservation and capacity
  CHECK_FALSE(inv[2].ok);  // storage read 20 B for an oracle run, and a conservation error of 1e-6
}

TEST_CASE("Props monotone: more SNIC slower, more agents faster -> violations, within noise -> holds",
          "[unit]") {
  Grid g;
  Fake base, snic, agents;
  base.jct = 100;
  snic.jct = 102;   // 2% slower with twice the SNIC: within the 3% noise
  agents.jct = 96;  // 4% faster with twice the agents: breaks
  g.add("dualpath", base);
  g.add("dualpath", snic, "snic");
  g.add("dualpath", agents, "agents");
  auto s = g.of("more_snic_no_slower");
  REQUIRE(s.size() == 1);
  CHECK(s[0].ok);
  auto a = g.of("more_agents_no_faster");
  REQUIRE(a.size() == 1);
  CHECK_FALSE(a[0].ok);
  CHECK(a[0].measured == Approx(0.96));
  CHECK_FALSE(a[0].at_most);
  g.out[1].result["summary"]["jct_s"] = 104.0;
  CHECK_FALSE(g.of("more_snic_no_slower")[0].ok);
}
