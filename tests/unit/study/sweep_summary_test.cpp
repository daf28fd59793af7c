// The pure half of `dpsim sweep` (sim/study/sweep_summary.h): grid and --set-list parsing, point names,
// the classification of one result.
#include "sim/study/sweep_summary.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

using sim::study::GridPoint;

namespace {

std::string pairs(const std::vector<GridPoint>& g) {
  std::string s;
  for (const auto& p : g) s += (s.empty() ? "" : ",") + std::to_string(p.p) + ":" + std::to_string(p.d);
  return s;
}

// A minimal `dpsim run` result: one PE and one DE node, each class given as a flat series (4 intervals).
nlohmann::json result(double snic, double pe_cnic_write, double de_dram) {
  auto link = [](const char* role, const char* dir, double u) {
    return nlohmann::json{{"node", 0},        {"role", role},           {"direction", dir}, {"bytes", 1.0},
                          {"utilization", u}, {"series", {u, u, u, u}}, {"busy_s", 1.0}};
  };
  nlohmann::json r;
  r["complete"] = true;
  r["summary"] = {{"jct_s", 10.0}};
  r["resource_classes"] = {{"prefill.gpu.compute", 0.01}};
  r["resources"]["snic"] = {link("prefill", "in", snic), link("decode", "in", snic)};
  r["resources"]["cnic"] = {link("prefill", "write", pe_cnic_write), link("decode", "write", 0.3)};
  r["resources"]["dram"] = {link("prefill", "shared", 0.2), link("decode", "shared", de_dram)};
  return r;
}

}  // namespace

TEST_CASE("Sweep grid: --pd pairs -> the pairs in order, malformed items -> an error naming the item",
          "[unit]") {
  auto g = sim::study::parse_pd_list("1:7,2:4,10:1");
  REQUIRE(g.is_ok());
  CHECK(pairs(*g) == "1:7,2:4,10:1");
  for (const char* bad : {"1:0", "0:3", "1-7", "1:7,", "", "a:b", "1:2:3"}) {
    INFO(bad);
    const auto e = sim::study::parse_pd_list(bad);
    CHECK_FALSE(e.is_ok());
  }
  CHECK(sim::study::parse_pd_list("1:7,x").status().message().find("\"x\"") != std::string::npos);
}

TEST_CASE("Sweep grid: --ratios at N nodes -> exactly each ratio, scaled to the most nodes <= N", "[unit]") {
  auto g = sim::study::parse_ratios("1/9,1/8,1/7,1/6,1/5,1/4,1/3,1/2,1,2,3,7/2,4,5", 10);
  REQUIRE(g.is_ok());
  CHECK(pairs(*g) == "1:9,1:8,1:7,1:6,1:5,2:8,2:6,3:6,5:5,6:3,6:2,7:2,8:2,5:1");
  for (const auto& p : *g) CHECK(p.p + p.d <= 10);
  // Unreduced ratios are reduced first (2/4 = 1/2 -> 3:6 at 10 nodes).
  auto r = sim::study::parse_ratios("2/4", 10);
  REQUIRE(r.is_ok());
  CHECK(pairs(*r) == "3:6");
  // A ratio that does not fit (1/20 at 10 nodes) takes the nearest pair with P + D = N.
  auto n = sim::study::parse_ratios("1/20", 10);
  REQUIRE(n.is_ok());
  CHECK(pairs(*n) == "1:9");
  for (const char* bad : {"0", "1/0", "-1", "x", "1/2/3", ""}) {
    INFO(bad);
    CHECK_FALSE(sim::study::parse_ratios(bad, 10).is_ok());
  }
}

TEST_CASE("Sweep grid: --p range or list at fixed D -> one point per P", "[unit]") {
  auto g = sim::study::parse_p_range("1..4", 2);
  REQUIRE(g.is_ok());
  CHECK(pairs(*g) == "1:2,2:2,3:2,4:2");
  auto l = sim::study::parse_p_range("1,2,8", 4);
  REQUIRE(l.is_ok());
  CHECK(pairs(*l) == "1:4,2:4,8:4");
  for (const char* bad : {"4..1", "0..3", "1..", "x", ""}) {
    INFO(bad);
    CHECK_FALSE(sim::study::parse_p_range(bad, 2).is_ok());
  }
}

TEST_CASE("Sweep grid: --set-list and expand_grid -> grid-major points with unique names", "[unit]") {
  auto s = sim::study::parse_set_list("policy.read_path=split,pe");
  REQUIRE(s.is_ok());
  CHECK(s->key == "policy.read_path");
  CHECK(s->values == std::vector<std::string>{"split", "pe"});
  CHECK_FALSE(sim::study::parse_set_list("policy.read_path").is_ok());
  CHECK_FALSE(sim::study::parse_set_list("=a,b").is_ok());
  auto a = sim::study::parse_set_list("workload.agents=16,32");
  REQUIRE(a.is_ok());
  const auto pts = sim::study::expand_grid({{1, 2}, {2, 2}}, {*s, *a});
  REQUIRE(pts.size() == 8);
  CHECK(pts[0].pd.p == 1);
  CHECK(pts[3].pd.p == 1);
  CHECK(pts[4].pd.p == 2);
  CHECK(pts[1].name == "p1-d2-split-agents32");
  std::set<std::string> names;
  for (const auto& p : pts) names.insert(p.name);
  CHECK(names.size() == pts.size());
}

TEST_CASE("Sweep classification: SNICs full, nothing fuller -> bottleneck-free, a fuller CNIC -> limited",
          "[unit]") {
  const sim::study::SweepPoint pt{"p1-d1", {1, 1}, {}};
  const auto free = sim::study::point_summary(pt, nullptr, 0.9, "x.json");
  CHECK(free.at("bottleneck_free").is_null());  // no result yet

  const nlohmann::json ok = result(0.97, 0.80, 0.50);
  const auto a = sim::study::point_summary(pt, &ok, 0.9, "x.json");
  CHECK(a.at("bottleneck_free") == true);
  CHECK(a.at("first_saturated").is_null());
  CHECK(a.at("utilization").at("snic").get<double>() == Approx(0.97));

  // The PE CNIC write direction runs at 99%, SNICs at 85%: limited by it.
  const nlohmann::json cnic = result(0.85, 0.99, 0.50);
  const auto b = sim::study::point_summary(pt, &cnic, 0.9, "x.json");
  CHECK(b.at("bottleneck_free") == false);
  CHECK(b.at("first_saturated") == "prefill.cnic.write");

  // At a bound the binding resource runs as full as the SNICs (within the tie margin): still free.
  const nlohmann::json tie = result(0.95, 0.96, 0.50);
  CHECK(sim::study::point_summary(pt, &tie, 0.9, "x.json").at("bottleneck_free") == true);

  // Nothing saturated but the SNICs below the threshold: not free, and the fullest class is named.
  const nlohmann::json low = result(0.70, 0.40, 0.60);
  const auto c = sim::study::point_summary(pt, &low, 0.9, "x.json");
  CHECK(c.at("bottleneck_free") == false);
  CHECK(c.at("first_saturated") == "decode.dram.shared");
}
