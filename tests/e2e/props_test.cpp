// End-to-end checks of `dpsim props`: the smoke property grid (tests/e2e/cases/props_smoke_grid.json:
// DS 27B storage-bound at four P:D points and Qwen 32B HBM-bound at 1:1, five policies, the monotone
// variants) holds every relation; a grid whose runs are cut short fails with the relation and the runs
// named; a bad grid file is exit 2.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "tests/e2e/support.h"

namespace {

e2e::Output props(const std::string& grid, const std::filesystem::path& dir) {
  const auto log = dir / "props.txt";
  const std::string cmd = e2e::timeout_prefix(300) + e2e::shell_quoted(e2e::dpsim_binary()) + " props " +
                          e2e::shell_quoted(grid) + " --jobs 2 --out " +
                          e2e::shell_quoted((dir / "out").string()) + " >" + e2e::shell_quoted(log.string()) +
                          " 2>&1";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, e2e::read_text(log)};
}

// The smoke grid cut to DS 27B at 1:1 and changed by `change`, written to DIR/<name>; returns its path.
std::string one_point_grid(const std::filesystem::path& dir, const std::string& name,
                           void (*change)(nlohmann::json&)) {
  nlohmann::json grid = e2e::read_json(e2e::case_file("props_smoke_grid.json"));
  grid["scenarios"] = {{{"file", e2e::case_file("props_ds27b.json")}, {"pd", {"1:1"}}}};
  grid.erase("explained");  // they name the scenarios cut away
  change(grid);
  const std::string file = (dir / name).string();
  std::ofstream(file) << grid.dump(1);
  return file;
}

std::map<std::string, nlohmann::json> relations(const nlohmann::json& report) {
  std::map<std::string, nlohmann::json> m;
  for (const auto& r : report.at("relations")) m[r.at("name").get<std::string>()] = r;
  return m;
}

}  // namespace

TEST_CASE("Props: the smoke grid -> every relation holds, and each relation was checked", "[e2e][props]") {
  e2e::Scratch s;
  const e2e::Output o = props(e2e::case_file("props_smoke_grid.json"), s.dir);
  INFO(o.text);
  CHECK(o.code == 0);
  CHECK(o.text.find("every relation holds") != std::string::npos);
  const auto rep = e2e::read_json((s.dir / "out" / "props.json").string());
  CHECK(rep.at("runs") == 55);  // (4 + 1) points x (3 policies + 2 x 4 runs of the monotone ones)
  CHECK(rep.at("violations").empty());
  // A relation checked on nothing proves nothing: each must have been evaluated on these runs.
  const auto rel = relations(rep);
  CHECK(rel.at("completes").at("checks") == 55);
  CHECK(rel.at("invariants").at("checks") == 55);
  for (const char* name : {"no_idle_storage", "no_idle_prefill_node", "oracle_is_bound", "dualpath_le_basic",
                           "scheduler_vs_round_robin", "more_snic_no_slower", "more_storage_no_slower",
                           "more_agents_no_faster"}) {
    INFO(name);
    CHECK(rel.at(name).at("checks").get<int>() >= 4);
  }
}

TEST_CASE("Props: runs cut short by a time limit -> exit 1, the relation, the runs and the figures",
          "[e2e][props]") {
  e2e::Scratch s;
  const std::string file = one_point_grid(s.dir, "cut.json", [](nlohmann::json& grid) {
    grid["policies"] = {{{"name", "basic"}, {"sets", {"policy.read_path=pe", "policy.layerwise=false"}}},
                        {{"name", "cut"}, {"sets", {"policy.read_path=dualpath", "sim.time_limit_s=20"}}}};
    grid["monotone"] = {{"policies", nlohmann::json::array()}};
  });
  const e2e::Output o = props(file, s.dir);
  INFO(o.text);
  CHECK(o.code == 1);
  CHECK(o.text.find("VIOLATION completes: 0 < 1: exit 0, stopped_by \"time_limit\"") != std::string::npos);
  CHECK(o.text.find("props_ds27b.p1d1.cut.base.json") != std::string::npos);
  const auto rep = e2e::read_json((s.dir / "out" / "props.json").string());
  REQUIRE(rep.at("violations").size() == 1);
  CHECK(rep.at("violations")[0].at("relation") == "completes");
}

TEST_CASE("Props: a bad grid file -> exit 2 naming the file and the field", "[e2e][props]") {
  e2e::Scratch s;
  const std::string file = one_point_grid(
      s.dir, "bad.json", [](nlohmann::json& grid) { grid["policies"][0]["sets"] = "policy.read_path=pe"; });
  const e2e::Output o = props(file, s.dir);
  INFO(o.text);
  CHECK(o.code == 2);
  CHECK(o.text.find("bad.json: policies[0].sets: expected an array of strings") != std::string::npos);
}
