// End-to-end check of what `utilization` means in the results (README, "results"): over the simulated run,
// summary.sim_end_s, not the JCT.
#include <catch2/catch.hpp>
#include <string>

#include "tests/e2e/support.h"

TEST_CASE("Utilisation: a run whose last persist ends after its last turn -> bytes / (bandwidth x sim_end_s)",
          "[e2e]") {
  // io_1p1d: after the last turn's last token its generated KV is still copied D2H and written to
  // storage, so the run ends after the JCT.
  const auto r = e2e::run_ok(e2e::case_file("io_1p1d.json"));
  const double end = r.at("summary").at("sim_end_s").get<double>();
  const double jct = r.at("summary").at("jct_s").get<double>();
  REQUIRE(end > jct * (1 + 1e-6));  // far enough apart for the checks below to tell them apart
  int links = 0;
  for (const char* resource : {"snic", "cnic", "dram"})
    for (const auto& e : r.at("resources").at(resource)) {
      const double bytes = e.at("bytes").get<double>(), bw = e.at("bandwidth_Bps").get<double>();
      if (bytes <= 0) continue;
      links++;
      CHECK(e.at("utilization").get<double>() == Approx(bytes / (bw * end)).epsilon(1e-9));
      CHECK(e.at("utilization").get<double>() != Approx(bytes / (bw * jct)).epsilon(1e-9));
    }
  CHECK(links >= 5);
  for (const auto& g : r.at("resources").at("gpu"))
    CHECK(g.at("utilization").get<double>() == Approx(g.at("busy_s").get<double>() / end).epsilon(1e-9));
}
