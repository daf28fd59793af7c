// End-to-end checks of the live bottleneck-free range and policy.pd_guard (control/live_range.h,
// policy/pd_guard.h) on the I/O-bound 1P1D (tests/e2e/cases/io_1p1d.json: 1 GPU per node, CNIC 500 GB/s,
// SNIC 10 GB/s, 1 MB of KV per token, Basic: the PE read path) with one agent whose turns 1-3 hit 5,100,
// 7,200 and 8,250 tokens: 20.55 GB of hit KV.
//
// From t = 0 the PE node's CNIC write runs at 2.5% (12.5 GB/s) and the DE node's SNIC at 50% (5 GB/s). The
// live range's lower bound is then sB_de / (g B_pw - sB_pe) = 5 / (12.5 - 10) = 2 > P/D = 1: below it.
// The PE CNIC write caps R at 12.5 GB/s for every DE-path share f; the PE SNIC keeps R there while
// (1 - f) 12.5 <= 10 (f >= 1/5), the DE SNIC while f 12.5 <= 5 (f <= 2/5); the SNIC-proportional share
// 5 / (10 + 5) = 1/3 lies in that band, so f* = 1/3: the guard reads 2/3 of each hit through the PE node.
#include <catch2/catch.hpp>

#include "tests/e2e/support.h"

namespace {

const std::string kPdGuardCase = e2e::case_file("io_1p1d.json");
constexpr double kHitBytes = (5100 + 7200 + 8250) * 1e6;

const std::string kEvents =
    "events=[{\"kind\":\"link_degrade\",\"at_s\":0,\"until_s\":1000,\"node\":0,\"resource\":\"cnic\","
    "\"direction\":\"write\",\"factor\":0.025},"
    "{\"kind\":\"link_degrade\",\"at_s\":0,\"until_s\":1000,\"node\":1,\"resource\":\"snic\","
    "\"direction\":\"in\",\"factor\":0.5}]";

}  // namespace

TEST_CASE("PdGuard: PE CNIC write degraded below the live range -> hit reads split 2/3 PE, 1/3 DE", "[e2e]") {
  const auto off = e2e::run_ok(kPdGuardCase, {kEvents});
  const auto on = e2e::run_ok(kPdGuardCase, {kEvents, "policy.pd_guard=on"});

  // Off: the PE path reads every hit byte through the PE node's SNIC.
  CHECK_THAT(e2e::link_bytes(off, "snic", "prefill", "in"), Catch::Matchers::WithinRel(kHitBytes, 1e-9));
  CHECK(e2e::link_bytes(off, "snic", "decode", "in") == 0);
  // On: 2/3 and 1/3.
  CHECK_THAT(e2e::link_bytes(on, "snic", "prefill", "in"),
             Catch::Matchers::WithinRel(kHitBytes * 2 / 3, 1e-9));
  CHECK_THAT(e2e::link_bytes(on, "snic", "decode", "in"), Catch::Matchers::WithinRel(kHitBytes / 3, 1e-9));
  // The PE CNIC write carries every hit byte once whichever side read it: the same bytes either way.
  CHECK_THAT(e2e::link_bytes(on, "cnic", "prefill", "write"),
             Catch::Matchers::WithinRel(e2e::link_bytes(off, "cnic", "prefill", "write"), 1e-9));

  // What the guard did: the three turns with a hit, each with a third of its hit moved to the DE path.
  const auto& g = on.at("pd_range").at("guard");
  CHECK(g.at("decisions") == 3);
  CHECK(g.at("steered") == 3);
  CHECK_THAT(g.at("bytes_to_de_path").get<double>(), Catch::Matchers::WithinRel(kHitBytes / 3, 1e-9));
  CHECK(g.at("bytes_to_pe_path").get<double>() == 0);
  CHECK(off.at("pd_range").at("guard").is_null());

  // The live range: inside at the start, below it once both events applied (each edge recomputes it).
  const auto& u = on.at("pd_range").at("updates");
  REQUIRE(u.size() == 3);
  CHECK(u[0].at("why") == "start");
  CHECK(u[0].at("inside") == true);
  CHECK(u[0].at("binding") == nlohmann::json::array({"pe_snic", "de_snic"}));
  CHECK_THAT(u[0].at("de_share").get<double>(), Catch::Matchers::WithinAbs(0.5, 1e-12));
  CHECK(u[1].at("why") == "events[0] applied");
  CHECK(u[2].at("why") == "events[1] applied");
  CHECK(u[2].at("t_s") == 0);
  CHECK(u[2].at("inside") == false);
  CHECK_THAT(u[2].at("pd_min").get<double>(), Catch::Matchers::WithinRel(2.0, 1e-12));
  CHECK(u[2].at("violated") == nlohmann::json::array({"pe_cnic_write"}));
  CHECK(u[2].at("binding") == nlohmann::json::array({"pe_cnic_write"}));
  CHECK_THAT(u[2].at("de_share").get<double>(), Catch::Matchers::WithinAbs(1.0 / 3, 1e-12));
  CHECK_THAT(u[2].at("rate_Bps").get<double>(), Catch::Matchers::WithinRel(12.5e9, 1e-12));
  CHECK(on.at("scenario").at("policy").at("pd_guard") == "on");
}

TEST_CASE(
    "PdGuard: inside the live range -> the read-path policy decides alone, and no events means no pd_range",
    "[e2e]") {
  auto on = e2e::run_ok(kPdGuardCase, {"policy.pd_guard=on"});
  auto off = e2e::run_ok(kPdGuardCase);
  CHECK_FALSE(off.contains("pd_range"));
  const auto& g = on.at("pd_range").at("guard");
  CHECK(g.at("decisions") == 3);
  CHECK(g.at("steered") == 0);
  CHECK(on.at("pd_range").at("updates").size() == 1);
  // The runs differ only in what the guard adds: the setting and its report.
  on.erase("pd_range");
  on["scenario"]["policy"]["pd_guard"] = "off";
  CHECK(e2e::without_run_info(on) == e2e::without_run_info(off));
}
