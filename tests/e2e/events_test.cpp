// End-to-end checks of the scenario's timed events (control/events.h) on the I/O-bound 1P1D
// (tests/e2e/cases/io_1p1d.json: 1 GPU per node, a 10 GB/s SNIC, 1 MB of KV per token, Basic) with one
// agent replaying one_agent.jsonl. Without events its turn 1 reads 5,100 tokens (5.1 GB) through the PE
// node's SNIC from t0 = 0.0695022 s to t0 + 0.51 s (the records, outputs.requests).
#include <catch2/catch.hpp>

#include "tests/e2e/support.h"

namespace {

const std::string kEventsCase = e2e::case_file("io_1p1d.json");

// Turn 1's read (start, end) from the per-turn records of a run with `sets`.
std::pair<double, double> turn1_read(std::vector<std::string> sets) {
  e2e::Scratch tmp;
  const std::string records = (tmp.dir / "r.csv").string();
  sets.push_back("outputs.requests=" + records);
  e2e::run_ok(kEventsCase, sets);
  const auto rows = e2e::read_csv(records);
  REQUIRE(rows.size() == 5);  // header + 4 turns
  REQUIRE(rows[0][3] == "read_start_s");
  REQUIRE(rows[0][4] == "read_end_s");
  return {std::stod(rows[2][3]), std::stod(rows[2][4])};
}

std::string degrade(double at, double until, const std::string& extra) {
  return "events=[{\"kind\":\"link_degrade\",\"at_s\":" + std::to_string(at) +
         ",\"until_s\":" + std::to_string(until) + ",\"node\":0,\"resource\":\"snic\"," + extra + "}]";
}

}  // namespace

TEST_CASE("Events: a SNIC at half its bandwidth from mid-read -> the read's rest takes twice as long",
          "[e2e]") {
  const auto [t0, end0] = turn1_read({});
  CHECK(end0 - t0 == Approx(0.51));
  // From t0 + 0.2 s on, 5 GB/s: the 3.1 GB left take 0.62 s.
  const auto [t1, end1] = turn1_read({degrade(t0 + 0.2, 100, "\"direction\":\"in\",\"factor\":0.5")});
  CHECK(t1 == Approx(t0));
  CHECK(end1 == Approx(t0 + 0.2 + 3.1 / 5).epsilon(1e-6));
  // Only over [t0 + 0.2, t0 + 0.4): 2 GB, then 1 GB at half rate, then 2.1 GB at full: the read ends 0.1 s
  // late.
  const auto [t2, end2] = turn1_read({degrade(t0 + 0.2, t0 + 0.4, "\"factor\":0.5")});
  CHECK(end2 == Approx(end0 + 0.1).epsilon(1e-6));
  // The other direction (persistence, out) does not slow a read.
  const auto [t3, end3] = turn1_read({degrade(t0 + 0.2, 100, "\"direction\":\"out\",\"factor\":0.5")});
  CHECK(end3 == Approx(end0).epsilon(1e-9));
}

TEST_CASE("Events: the results and the timeline say what each event did, an empty list changes nothing",
          "[e2e]") {
  e2e::Scratch tmp;
  const std::string tl = (tmp.dir / "tl.json").string();
  const auto j = e2e::run_ok(kEventsCase, {degrade(0.2, 0.4, "\"factor\":0.25"), "outputs.timeline=" + tl});
  const nlohmann::json trace = e2e::read_json(tl);
  int spans = 0;
  for (const auto& ev : trace.at("traceEvents"))
    if (ev.at("ph") == "X" && ev.at("name") == "link_degrade n0 snic x0.25") {
      spans++;
      CHECK(ev.at("ts").get<double>() == Approx(0.2e6));
      CHECK(ev.at("dur").get<double>() == Approx(0.2e6));
    }
  CHECK(spans == 1);
  REQUIRE(j.at("events").size() == 1);
  const auto& e = j.at("events")[0];
  CHECK(e.at("links") == nlohmann::json::array({"n0 snic in", "n0 snic out"}));
  CHECK(e.at("applied_at_s").get<double>() == Approx(0.2));
  CHECK(e.at("restored_at_s").get<double>() == Approx(0.4));
  // An event after the run's end never acts.
  const auto late = e2e::run_ok(kEventsCase, {degrade(1000, 2000, "\"factor\":0.5")});
  CHECK(late.at("events")[0].at("applied_at_s").is_null());
  auto a = e2e::run_ok(kEventsCase);
  auto b = e2e::run_ok(kEventsCase, {"events=[]"});
  CHECK_FALSE(b.contains("events"));
  a.erase("run_info");
  b.erase("run_info");
  CHECK(a == b);
}

TEST_CASE(
    "Events: a SNIC at its floor past the time limit -> the run stops there with its results, not abort",
    "[e2e]") {
  // Turn 1's 5.1 GB read at 10 MB/s (a thousandth of the SNIC) outlasts the 10 s limit and the 60 s drain:
  // the drain abandons it. Before, the read's lane took the abandoned transfer for a broken invariant and
  // aborted (exit 134, no results); SIGTERM on such a run did the same.
  const std::string degrade =
      R"(events=[{"kind":"link_degrade","at_s":0,"until_s":100000,"node":0,"resource":"snic","factor":0.001}])";
  const auto r = e2e::run_dpsim(kEventsCase, {degrade, "sim.time_limit_s=10"});
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.result.is_object());
  CHECK(r.result.at("complete") == false);
  CHECK(r.result.at("summary").at("stopped_by") == "time_limit");
  CHECK(r.result.at("summary").at("sim_end_s").get<double>() <= 10 + 60 + 1e-6);
  // Its bytes so far are on the SNIC: 10 MB/s over the 70 s the read ran.
  double snic_in = 0;
  for (const auto& l : r.result.at("resources").at("snic"))
    if (l.at("node") == 0 && l.at("direction") == "in") snic_in = l.at("bytes").get<double>();
  CHECK(snic_in == Approx(10e6 * (70 - 0.0695022)).epsilon(1e-3));
}
