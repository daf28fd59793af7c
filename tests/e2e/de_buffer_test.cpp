// End-to-end checks of the DE buffer in HBM (cluster.de_buffer = hbm; sim/engine/de_buffer.h): every read
// path and scheduler keeps working with it, the DE DRAM carries only what the hbm routes put there, HBM
// that fills up delays turns without a deadlock, the Oracle is unchanged, `dpsim bottleneck --de-buffer`
// gives the (H1)-(H7) range, and a reduced sweep measures it.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

double summary(const nlohmann::json& r, const char* key) {
  return r.at("summary").at(key).get<double>();
}

double hbm(const nlohmann::json& r, const char* key) {
  return r.at("summary").at("de_hbm").at(key).get<double>();
}

}  // namespace

TEST_CASE(
    "DE buffer hbm: every read path and scheduler on DS 27B 1P2D -> completes, the decode DRAM carries "
    "the DE-side reads once and persistence twice",
    "[e2e]") {
  // With the DE buffer in HBM nothing lands in the decode node's DRAM but the bounce of its own storage reads
  // (SNIC in, once) and the KV persisted from HBM (D2H in, then out to storage: twice what leaves the SNIC).
  for (const char* read_path : {"pe", "de", "dualpath", "split", "oracle"}) {
    for (const char* scheduler : {"round_robin", "least_tokens", "dualpath"}) {
      INFO(read_path << " / " << scheduler);
      const auto r = e2e::run_ok(e2e::case_file("balance_1p2d.json"),
                                 {"cluster.de_buffer=hbm", std::string("policy.read_path=") + read_path,
                                  std::string("policy.scheduler=") + scheduler});
      CHECK(r.at("summary").at("stopped_by") == "all_turns_done");
      const double dram = e2e::link_bytes(r, "dram", "decode", "");
      const double in = e2e::link_bytes(r, "snic", "decode", "in");
      const double out = e2e::link_bytes(r, "snic", "decode", "out");
      CHECK(dram == Approx(in + 2 * out).epsilon(1e-9).margin(1e3));
      if (std::string(read_path) == "de") CHECK(in > 0);
      if (std::string(read_path) == "pe") CHECK(in == 0);
      // The decode join follows the prefill at once: nothing to copy in.
      CHECK(r.at("summary").at("ttft_breakdown_s").at("alloc_after_first_token").get<double>() <= 1e-3);
    }
  }
}

TEST_CASE("DE buffer hbm: the Oracle moves no byte and holds no buffer -> the same results as with dram",
          "[e2e]") {
  auto dram = e2e::without_run_info(e2e::run_ok(e2e::case_file("balance_1p2d.json"),
                                                {"policy.read_path=oracle", "cluster.de_buffer=dram"}));
  auto hbm = e2e::without_run_info(
      e2e::run_ok(e2e::case_file("balance_1p2d.json"), {"policy.read_path=oracle", "cluster.de_buffer=hbm"}));
  CHECK(hbm.at("scenario").at("cluster").at("de_buffer") == "hbm");
  // The one difference: with dram the loader starts a copy-in of 0 bytes (nothing is sent) that counts as a
  // transfer in flight while it is waited for.
  for (auto* r : {&dram, &hbm}) {
    r->erase("scenario");
    r->at("invariants").erase("peak_transfers_in_flight");
  }
  CHECK(dram == hbm);
}

TEST_CASE(
    "DE buffer hbm: Qwen 32B 1P1D, KV larger than a DE's HBM share -> turns wait for HBM, none "
    "deadlocks, and the HBM held before decoding grows",
    "[e2e]") {
  // sched_hbm_1p1d: about 10.5 GB of KV per DE GPU, turns of up to 64K tokens (256 KB each), 5,119 turns.
  // With the DE buffer in HBM a turn's HBM is held from its read (or its PE batch) to its end, so the DEs'
  // HBM is full of turns that read and prefill; requests wait for it holding their PE buffers (PE and split
  // read paths). Every turn must still complete (run_ok: no stall, nothing held at the end).
  for (const char* read_path : {"pe", "de", "split"}) {
    for (const char* scheduler : {"round_robin", "dualpath"}) {
      INFO(read_path << " / " << scheduler);
      const std::vector<std::string> sets = {std::string("policy.read_path=") + read_path,
                                             std::string("policy.scheduler=") + scheduler};
      auto hbm_sets = sets;
      hbm_sets.push_back("cluster.de_buffer=hbm");
      const auto h = e2e::run_ok(e2e::case_file("sched_hbm_1p1d.json"), hbm_sets, 60);
      CHECK(summary(h, "turns_completed") == 5119);
      // The DEs filled up with turns not yet decoding.
      CHECK(hbm(h, "before_join_peak_bytes_one_de") >= 0.9 * hbm(h, "kv_bytes_per_de"));
      if (std::string(scheduler) == "round_robin") {
        // Immediate scheduler: with dram the HBM is taken only for the copy-in, with hbm from the read on.
        const auto d = e2e::run_ok(e2e::case_file("sched_hbm_1p1d.json"), sets, 60);
        CHECK(hbm(h, "before_join_byte_s") > 2 * hbm(d, "before_join_byte_s"));
        CHECK(summary(h, "de_hbm_waiting_fraction") > summary(d, "de_hbm_waiting_fraction"));
      }
    }
  }
}

TEST_CASE("DE buffer hbm: a turn larger than a DE's HBM -> it runs alone, every turn completes", "[e2e]") {
  for (const char* scheduler : {"round_robin", "dualpath"}) {
    INFO(scheduler);
    const auto r = e2e::run_ok(e2e::case_file("sched_oversize_1p1d.json"),
                               {"cluster.de_buffer=hbm", std::string("policy.scheduler=") + scheduler}, 60);
    CHECK(summary(r, "turns_completed") == 387);
  }
}

TEST_CASE(
    "DE buffer hbm: dpsim bottleneck --de-buffer hbm -> 1/7 <= P/D <= 7 on the paper's node, a bad "
    "value -> exit 2",
    "[e2e]") {
  e2e::Scratch s;
  const std::string exe = e2e::shell_quoted(e2e::dpsim_binary());
  const std::string out = (s.dir / "out.txt").string(), err = (s.dir / "err.txt").string();
  auto run = [&](const std::string& args) {
    return e2e::shell(e2e::timeout_prefix(30) + exe + " bottleneck " + args + " >" + e2e::shell_quoted(out) +
                      " 2>" + e2e::shell_quoted(err));
  };
  REQUIRE(run("hopper-8x400g --de-buffer hbm") == 0);
  const std::string table = e2e::read_text(out);
  INFO(table);
  CHECK(table.find("1/7 <= P/D <= 7 ") != std::string::npos);
  CHECK(table.find("(H4)") != std::string::npos);
  REQUIRE(run("hopper-8x400g --de-buffer hbm --json --p 7 --d 1") == 0);
  const nlohmann::json j = nlohmann::json::parse(e2e::read_text(out));
  CHECK(j.at("pd_max").get<double>() == Approx(7.0));
  CHECK(j.at("inputs").at("de_buffer") == "hbm");
  CHECK(j.at("point").at("inside") == true);
  CHECK(j.at("point").at("de_cnic_write").at("utilisation").get<double>() == Approx(1.0));
  // The default is the paper's DE buffer in DRAM.
  REQUIRE(run("hopper-8x400g") == 0);
  CHECK(e2e::read_text(out).find("1/7 <= P/D <= 7/2") != std::string::npos);
  CHECK(run("hopper-8x400g --de-buffer sram") == 2);
  CHECK(e2e::read_text(err).find("--de-buffer: expected one of dram, hbm, got \"sram\"") !=
        std::string::npos);
  CHECK(e2e::read_text(out).empty());
}

// scenarios/sweeps/README.md: the measured range with the DE buffer in HBM, on a reduced grid at the
// analytic bounds 1/7 and 7 and one step outside each (64 agents).
TEST_CASE(
    "DE buffer hbm: sweep of the paper's node, even split -> measured range = analytic 1/7..7 within "
    "one grid step",
    "[e2e][sweep]") {
  e2e::Scratch s;
  const auto dir = s.dir / "sweep";
  const std::string cmd =
      e2e::timeout_prefix(600) + e2e::shell_quoted(e2e::dpsim_binary()) + " sweep " +
      e2e::shell_quoted(e2e::repo_file("scenarios/sweeps/bottleneck-free.json")) +
      " --pd 1:8,1:7,1:6,6:1,7:1,8:1 --set workload.agents=64 --set cluster.de_buffer=hbm" +
      " --jobs 6 --out " + e2e::shell_quoted(dir.string()) + " >" +
      e2e::shell_quoted(dir.string() + ".stdout") + " 2>&1";
  INFO(e2e::read_text(dir.string() + ".stdout"));
  REQUIRE(e2e::shell(cmd) == 0);
  const nlohmann::json sum = e2e::read_json((dir / "summary.json").string());
  INFO(sum.dump(1));
  CHECK(sum.at("analytic_range").at("pd_min").get<double>() == Approx(1.0 / 7));
  CHECK(sum.at("analytic_range").at("pd_max").get<double>() == Approx(7.0));
  const double lo = sum.at("measured_range").at("pd_min").get<double>();
  const double hi = sum.at("measured_range").at("pd_max").get<double>();
  CHECK(lo >= 1.0 / 7 - 1e-9);
  CHECK(lo <= 1.0 / 6 + 1e-9);
  CHECK(hi >= 6 - 1e-9);
  CHECK(hi <= 7 + 1e-9);
  for (const auto& p : sum.at("points")) {
    INFO(p.dump());
    if (p.at("P") == 1 && p.at("D") == 8) {
      CHECK(p.at("bottleneck_free") == false);
      CHECK(p.at("first_saturated") == "prefill.cnic.write");
    }
    if (p.at("P") == 8 && p.at("D") == 1) {
      CHECK(p.at("bottleneck_free") == false);
      CHECK(p.at("first_saturated") == "decode.cnic.write");  // (H4); the DE DRAM carries sB only
    }
    if (p.at("P") == 6 && p.at("D") == 1) CHECK(p.at("bottleneck_free") == true);  // past the DRAM's 7/2
  }
}
