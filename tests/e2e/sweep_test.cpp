// End-to-end checks of `dpsim sweep`: the measured bottleneck-free range on the paper's hardware against
// the analytic one of DualPath §4.2 (1/7 <= P/D <= 7/2), the resource that saturates first outside it,
// resume, and --emit-jobs / --merge. The full grid (scenarios/sweeps/bottleneck-free.json, README.md) is
// too slow for ctest, so the range test runs a reduced grid at the bounds and one step outside each.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/e2e/support.h"

namespace {

const std::string kSweep = e2e::repo_file("scenarios/sweeps/bottleneck-free.json");

std::string sweep_cmd(const std::string& args, const std::filesystem::path& dir) {
  return e2e::timeout_prefix(600) + e2e::shell_quoted(e2e::dpsim_binary()) + " sweep " + args + " --out " +
         e2e::shell_quoted(dir.string()) + " >" + e2e::shell_quoted((dir.string() + ".stdout")) + " 2>&1";
}

const nlohmann::json& point(const nlohmann::json& summary, int p, int d) {
  for (const auto& q : summary.at("points"))
    if (q.at("P") == p && q.at("D") == d) return q;
  FAIL("no point " << p << ":" << d);
  return summary;
}

}  // namespace

// The measured range may end one grid step inside the analytic one at the top: at P/D = 7/2 exactly the
// DE DRAM and the DE CNIC write direction are, on paper, as full as the SNICs, and in the simulation they
// reach their capacity first (scenarios/sweeps/README.md).
TEST_CASE("Sweep: paper hardware, even split -> measured range = analytic 1/7..7/2 within one grid step",
          "[e2e][sweep]") {
  e2e::Scratch s;
  const auto dir = s.dir / "sweep";
  // Grid (P/D): 1/8 < 1/7 < 1/6 ... 3 < 7/2 < 4; the analytic bounds are grid points.
  const std::string args =
      e2e::shell_quoted(kSweep) + " --pd 1:8,1:7,1:6,3:1,7:2,4:1 --set workload.agents=64 --jobs 6";
  INFO(e2e::read_text(dir.string() + ".stdout"));
  REQUIRE(e2e::shell(sweep_cmd(args, dir)) == 0);
  const nlohmann::json sum = e2e::read_json((dir / "summary.json").string());
  INFO(sum.dump(1));
  CHECK(sum.at("kind") == "sweep");
  CHECK(sum.at("analytic_range").at("pd_min").get<double>() == Approx(1.0 / 7));
  CHECK(sum.at("analytic_range").at("pd_max").get<double>() == Approx(3.5));
  // Within one grid step of the bounds, and never outside the analytic range by a whole step.
  const double lo = sum.at("measured_range").at("pd_min").get<double>();
  const double hi = sum.at("measured_range").at("pd_max").get<double>();
  CHECK(lo >= 1.0 / 7 - 1e-9);
  CHECK(lo <= 1.0 / 6 + 1e-9);
  CHECK(hi >= 3.0 - 1e-9);
  CHECK(hi <= 3.5 + 1e-9);
  // Below the range the PE CNIC write direction saturates first (2)-(3); above it the DE CNIC write
  // direction (6)-(7) or the DE DRAM (8).
  CHECK(point(sum, 1, 8).at("bottleneck_free") == false);
  CHECK(point(sum, 1, 8).at("first_saturated") == "prefill.cnic.write");
  CHECK(point(sum, 4, 1).at("bottleneck_free") == false);
  const std::string above = point(sum, 4, 1).at("first_saturated").get<std::string>();
  CHECK((above == "decode.cnic.write" || above == "decode.dram.shared"));
  CHECK(point(sum, 1, 6).at("bottleneck_free") == true);
  CHECK(point(sum, 3, 1).at("bottleneck_free") == true);
  // The CSV has a header and one row per point.
  std::istringstream csv(e2e::read_text(dir / "summary.csv"));
  int rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  CHECK(rows == 7);
}

TEST_CASE("Sweep: rerun of a finished sweep -> no point is rerun and the summary is unchanged",
          "[e2e][sweep]") {
  e2e::Scratch s;
  const auto dir = s.dir / "sweep";
  const std::string args =
      e2e::shell_quoted(kSweep) +
      " --p 1..2 --d 2 --set workload.agents=16 --set-list policy.read_path=split,pe --jobs 4";
  REQUIRE(e2e::shell(sweep_cmd(args, dir)) == 0);
  const nlohmann::json first = e2e::read_json((dir / "summary.json").string());
  CHECK(first.at("points").size() == 4);
  CHECK(first.at("measured_ranges").size() == 2);
  CHECK(first.at("points")[1].at("name") == "p1-d2-pe");
  REQUIRE(e2e::shell(sweep_cmd(args, dir)) == 0);
  const std::string log = e2e::read_text(dir.string() + ".stdout");
  INFO(log);
  CHECK(log.find("4 points, 0 to run (4 already done)") != std::string::npos);
  CHECK(e2e::read_json((dir / "summary.json").string()) == first);

  // A point whose run a signal cut short (as `dpsim run` writes it on SIGINT) is run again, alone.
  const auto interrupted = dir / "points" / "p1-d2-pe.json";
  nlohmann::json partial = e2e::read_json(interrupted.string());
  partial["complete"] = false;
  partial["summary"]["stopped_by"] = "SIGINT";
  { std::ofstream(interrupted) << partial.dump(1); }
  REQUIRE(e2e::shell(sweep_cmd(args, dir)) == 0);
  const std::string log2 = e2e::read_text(dir.string() + ".stdout");
  INFO(log2);
  CHECK(log2.find("4 points, 1 to run (3 already done)") != std::string::npos);
  CHECK(e2e::read_json(interrupted.string()).at("summary").at("stopped_by") == "all_turns_done");
  CHECK(e2e::read_json((dir / "summary.json").string()) == first);
}

TEST_CASE("Sweep: --emit-jobs then the commands then --merge -> the same summary as a local sweep",
          "[e2e][sweep]") {
  e2e::Scratch s;
  const auto dir = s.dir / "sweep";
  const auto jobs = s.dir / "jobs.txt";
  const std::string args = e2e::shell_quoted(kSweep) + " --pd 1:1,2:1 --set workload.agents=16 --emit-jobs " +
                           e2e::shell_quoted(jobs.string());
  REQUIRE(e2e::shell(sweep_cmd(args, dir)) == 0);
  std::istringstream lines(e2e::read_text(jobs));
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) REQUIRE(e2e::shell(line + " >/dev/null 2>&1") == 0);
  CHECK(n == 2);
  REQUIRE(e2e::shell("timeout 60 " + e2e::shell_quoted(e2e::dpsim_binary()) + " sweep --merge " +
                     e2e::shell_quoted(dir.string()) + " >/dev/null") == 0);
  const nlohmann::json sum = e2e::read_json((dir / "summary.json").string());
  REQUIRE(sum.at("points").size() == 2);
  for (const auto& p : sum.at("points")) CHECK(p.at("jct_s").get<double>() > 0);
  // A missing point: merge still writes the summary (null result) and exits 1.
  std::filesystem::remove(dir / "points" / "p2-d1.json");
  CHECK(e2e::shell(e2e::shell_quoted(e2e::dpsim_binary()) + " sweep --merge " +
                   e2e::shell_quoted(dir.string()) + " >/dev/null 2>&1") == 1);
  CHECK(e2e::read_json((dir / "summary.json").string()).at("points")[1].at("jct_s").is_null());
}
