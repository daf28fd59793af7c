#include "sim/metrics/timeline.h"

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/config/scenario.h"
#include "tests/unit/config/config_fixtures.h"

using Catch::Matchers::Contains;
using sim::metrics::Timeline;
using sim::metrics::TimelineOptions;
using sim::metrics::TurnTimes;

namespace {

TimelineOptions window(double start_s, double end_s, size_t max_events = 1000) {
  TimelineOptions o;
  o.start_s = start_s;
  o.end_s = end_s;
  o.max_events = max_events;
  return o;
}

nlohmann::json parse(const Timeline& tl) {
  return nlohmann::json::parse(tl.to_json());
}

// The events of phase `ph` ("X", "C", "M").
std::vector<nlohmann::json> of_phase(const nlohmann::json& doc, const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == ph) out.push_back(e);
  return out;
}

// A 1P1D layout of 2 GPUs per node, with events on both engines, one request track and a link counter.
Timeline small_run(size_t max_events = 1000) {
  Timeline tl(window(0, 100, max_events));
  tl.set_layout(1, 1, 2);
  tl.complete(tl.node_pid(0), tl.engine_tid(0, 1), "prefill", 1.0, 0.5, {{"requests", 3}, {"tokens", 900}});
  tl.complete(tl.node_pid(1), tl.engine_tid(1, 0), "decode", 2.0, 4.0, {{"batch", 2}});
  tl.counter(tl.links_pid(), tl.links_tid(), "n0 snic", 0.0, {{"in", 0.5}, {"out", 0.25}});
  TurnTimes t;
  t.agent = 3;
  t.turn = 2;
  t.issue = 0.5;
  t.ready = 0.9;
  t.read_s = 0.3;
  t.prefill_start = 1.0;
  t.first = 1.5;
  t.decode_join = 1.7;
  t.done = 6.0;
  tl.turn_first_token(t);
  tl.turn_done(t);
  return tl;
}

}  // namespace

TEST_CASE("Timeline: events outside the window -> dropped, overlapping complete events clipped", "[unit]") {
  Timeline tl(window(10, 20));
  tl.complete(1, 1, "before", 5, 2);
  tl.complete(1, 1, "into", 8, 4);
  tl.complete(1, 1, "inside", 12, 1);
  tl.complete(1, 1, "out of", 15, 10);
  tl.complete(1, 1, "after", 25, 1);
  tl.counter(2, 2, "c", 9.9, {{"v", 1}});
  tl.counter(2, 2, "c", 10, {{"v", 2}});
  tl.counter(2, 2, "c", 20, {{"v", 3}});
  tl.counter(2, 2, "c", 20.1, {{"v", 4}});
  const auto doc = parse(tl);
  std::map<std::string, std::pair<double, double>> x;  // name -> (ts, dur) in us
  for (const auto& e : of_phase(doc, "X")) x[e.at("name")] = {e.at("ts"), e.at("dur")};
  REQUIRE(x.size() == 3);
  CHECK(x.at("into") == std::make_pair(10e6, 2e6));
  CHECK(x.at("inside") == std::make_pair(12e6, 1e6));
  CHECK(x.at("out of") == std::make_pair(15e6, 5e6));
  std::vector<double> counter_values;
  for (const auto& e : of_phase(doc, "C")) counter_values.push_back(e.at("args").at("v"));
  CHECK(counter_values == std::vector<double>{2, 3});
  for (const auto& e : doc.at("traceEvents")) {
    CHECK(e.at("ts").get<double>() >= 10e6);
    CHECK(e.at("ts").get<double>() <= 20e6);
  }
  CHECK_FALSE(tl.truncated());
}

TEST_CASE("Timeline: cap reached -> truncated in otherData, no event recorded after it", "[unit]") {
  Timeline tl(window(0, 1000, 10));
  for (int i = 0; i < 50; ++i) tl.complete(1, 1, "pass", i, 0.5);
  const size_t at_cap = tl.size();
  tl.complete(1, 1, "late", 0.1, 0.1);  // would sort first: still refused
  tl.counter(1, 1, "c", 0.2, {{"v", 1}});
  CHECK(at_cap <= 10);
  CHECK(tl.size() == at_cap);
  CHECK(tl.truncated());
  const auto doc = parse(tl);
  CHECK(doc.at("traceEvents").size() == at_cap);
  const auto& other = doc.at("otherData");
  CHECK(other.at("truncated") == true);
  CHECK(other.at("max_events") == 10);
  CHECK(other.at("events") == at_cap);
  CHECK(other.at("dropped_events").get<uint64_t>() == 50 + 2 - of_phase(doc, "X").size());
  // The first refused pass starts right after the last stored one.
  const double last_ts = of_phase(doc, "X").back().at("ts").get<double>() / 1e6;
  CHECK(other.at("truncated_at_s").get<double>() == Approx(last_ts + 1));
  for (const auto& e : of_phase(doc, "X")) CHECK(e.at("name") == "pass");
}

TEST_CASE("Timeline: simulated seconds -> microseconds with nanosecond digits", "[unit]") {
  Timeline tl(window(0, 100));
  tl.complete(1, 1, "a", 1.5, 0.25);
  tl.complete(1, 2, "b", 3e-9, 1e-6);
  tl.counter(1, 1, "c", 42.000001, {{"v", 0.5}});
  const std::string text = tl.to_json();
  CHECK_THAT(text, Contains(R"("ts":1500000.000,"dur":250000.000)"));
  CHECK_THAT(text, Contains(R"("ts":0.003,"dur":1.000)"));
  CHECK_THAT(text, Contains(R"("ts":42000001.000)"));
}

TEST_CASE("Timeline: a small run -> valid trace-event JSON with metadata naming the used tracks", "[unit]") {
  const Timeline tl = small_run();
  const auto doc = parse(tl);
  REQUIRE(doc.at("traceEvents").is_array());
  CHECK(doc.at("displayTimeUnit") == "ms");
  CHECK(doc.at("otherData").at("truncated") == false);
  double last_ts = -1;
  for (const auto& e : doc.at("traceEvents")) {
    for (const char* k : {"ph", "ts", "pid", "tid", "name"}) CHECK(e.contains(k));
    CHECK(e.at("pid").get<int>() >= 1);
    CHECK(e.at("tid").get<int>() >= 1);
    CHECK(e.at("ts").get<double>() >= last_ts);  // sorted
    last_ts = e.at("ts");
    if (e.at("ph") == "X") CHECK(e.at("dur").get<double>() >= 0);
  }
  std::set<std::string> names;
  for (const auto& e : of_phase(doc, "M"))
    names.insert(e.at("name").get<std::string>() + "=" + e.at("args").value("name", std::string()));
  CHECK(names.count("process_name=n0 prefill") == 1);
  CHECK(names.count("process_name=n1 decode") == 1);
  CHECK(names.count("process_name=requests") == 1);
  CHECK(names.count("process_name=links") == 1);
  CHECK(names.count("thread_name=gpu1") == 1);  // n0's GPU 1 and n1's GPU 0 have events
  CHECK(names.count("thread_name=gpu0") == 1);
  CHECK(names.count("thread_name=agent 3") == 1);
  // Metadata only for used tracks: 4 processes x (name + sort index) + 3 threads.
  CHECK(of_phase(doc, "M").size() == 4 * 2 + 3);
}

TEST_CASE("Timeline: dpsim layout -> ids >= 1 and thread ids unique across processes", "[unit]") {
  Timeline tl(window(0, 10));
  tl.set_layout(2, 3, 8);
  std::set<int> tids, pids;
  for (int n = 0; n < 5; ++n) {
    pids.insert(tl.node_pid(n));
    for (int g = 0; g < 8; ++g) tids.insert(tl.engine_tid(n, g));
  }
  pids.insert(tl.requests_pid());
  pids.insert(tl.links_pid());
  tids.insert(tl.links_tid());
  for (int a = 0; a < 100; ++a) tids.insert(tl.agent_tid(a));
  CHECK(pids.size() == 7);
  CHECK(*pids.begin() >= 1);
  CHECK(tids.size() == 5 * 8 + 1 + 100);
  CHECK(*tids.begin() >= 1);
}

TEST_CASE("Timeline: a turn -> phases nested in its turn span, zero-length phases left out", "[unit]") {
  const auto doc = parse(small_run());
  std::map<std::string, std::pair<double, double>> x;  // name -> (start, end) in us
  for (const auto& e : of_phase(doc, "X"))
    if (e.at("pid") == 3)
      x[e.at("name")] = {e.at("ts"), e.at("ts").get<double>() + e.at("dur").get<double>()};
  // queue 0.5-0.6, read 0.6-0.9, wait 0.9-1.0, prefill 1.0-1.5, alloc 1.5-1.7, decode 1.7-6.0.
  REQUIRE(x.size() == 7);
  CHECK(x.at("turn 2") == std::make_pair(0.5e6, 6.0e6));
  CHECK(x.at("queue") == std::make_pair(0.5e6, 0.6e6));
  CHECK(x.at("read") == std::make_pair(0.6e6, 0.9e6));
  CHECK(x.at("wait") == std::make_pair(0.9e6, 1.0e6));
  CHECK(x.at("prefill") == std::make_pair(1.0e6, 1.5e6));
  CHECK(x.at("alloc") == std::make_pair(1.5e6, 1.7e6));
  CHECK(x.at("decode") == std::make_pair(1.7e6, 6.0e6));
  // The enclosing span comes first at its start time (viewers nest by order at equal ts).
  for (const auto& e : of_phase(doc, "X"))
    if (e.at("pid") == 3) {
      CHECK(e.at("name") == "turn 2");
      break;
    }

  Timeline tl(window(0, 10));
  tl.set_layout(1, 1, 1);
  TurnTimes t;  // scheduled and read at once, one token: no queue, no wait, no decode
  t.issue = 1;
  t.ready = 2;
  t.read_s = 1;
  t.prefill_start = 2;
  t.first = t.done = 3;
  tl.turn_first_token(t);
  tl.turn_done(t);
  std::set<std::string> names;
  for (const auto& e : of_phase(parse(tl), "X")) names.insert(e.at("name"));
  CHECK(names == std::set<std::string>{"read", "prefill", "turn 0"});
}

TEST_CASE("Timeline: a counter sample equal to the previous one -> skipped", "[unit]") {
  Timeline tl(window(0, 10));
  for (double v : {0.0, 0.0, 0.5, 0.5, 0.0}) tl.counter(1, 1, "n0 cnic", tl.size(), {{"read", v}});
  tl.counter(1, 1, "n1 cnic", 5, {{"read", 0.0}});  // another track: its first sample is kept
  std::vector<double> values;
  for (const auto& e : of_phase(parse(tl), "C")) values.push_back(e.at("args").at("read"));
  CHECK(values == std::vector<double>{0.0, 0.5, 0.0, 0.0});
}

TEST_CASE("Timeline: the same recording twice -> byte-identical JSON, and agents sampled every k-th",
          "[unit]") {
  CHECK(small_run().to_json() == small_run().to_json());
  TimelineOptions o = window(0, 10);
  o.request_every = 3;
  Timeline tl(o);
  CHECK(tl.sampled_agent(0));
  CHECK_FALSE(tl.sampled_agent(1));
  CHECK_FALSE(tl.sampled_agent(2));
  CHECK(tl.sampled_agent(3));
  CHECK(parse(tl).at("otherData").at("request_every") == 3);
}

TEST_CASE("Scenario: outputs.timeline keys -> defaults, echo, and errors naming the key", "[unit]") {
  using sim::config::parse_scenario;
  using sim::config::testing::data_file;
  using sim::config::testing::error_of;
  const std::string base = "{\"hardware\": \"" + data_file("tiny-hw.json") + "\", \"model\": \"" +
                           data_file("tiny-model.json") + "\"}";
  auto sc = parse_scenario(base, "s.json", {});
  REQUIRE(sc);
  CHECK(sc->outputs.timeline.empty());
  CHECK(sc->outputs.timeline_start_s == 0);
  CHECK(sc->outputs.timeline_end_s == 600);
  CHECK(sc->outputs.timeline_max_events == 200000);
  CHECK(sc->outputs.timeline_request_sample == 0);
  CHECK(sc->resolved.at("outputs").at("timeline") == "");

  sc =
      parse_scenario(base, "s.json",
                     {"outputs.timeline=out/t.json", "outputs.timeline_start_s=5", "outputs.timeline_end_s=9",
                      "outputs.timeline_max_events=7", "outputs.timeline_request_sample=4"});
  REQUIRE(sc);
  CHECK(sc->outputs.timeline == "out/t.json");
  CHECK(sc->resolved.at("outputs").at("timeline_end_s") == 9.0);
  CHECK(sc->resolved.at("outputs").at("timeline_max_events") == 7);
  CHECK(sc->resolved.at("outputs").at("timeline_request_sample") == 4);

  CHECK_THAT(error_of(parse_scenario(base, "s.json", {"outputs.timeline_end_s=0"})),
             Contains("outputs.timeline_end_s"));
  CHECK_THAT(
      error_of(parse_scenario(base, "s.json", {"outputs.timeline_start_s=50", "outputs.timeline_end_s=50"})),
      Contains("outputs.timeline_end_s: expected a number > outputs.timeline_start_s (50)"));
  CHECK_THAT(error_of(parse_scenario(base, "s.json", {"outputs.timeline_max_events=0"})),
             Contains("outputs.timeline_max_events"));
  CHECK_THAT(error_of(parse_scenario(base, "s.json", {"outputs.timeline_request_sample=-1"})),
             Contains("outputs.timeline_request_sample"));
  CHECK_THAT(error_of(parse_scenario(base, "s.json", {"outputs.timeline=3"})), Contains("outputs.timeline"));
}
