// End-to-end checks of outputs.timeline (sim/metrics/timeline.h): the Chrome trace-event file of a run of
// tests/e2e/cases/balance_1p2d.json (1P2D of 8-GPU nodes, DS 27B) with 32 agents, about 2.3 s simulated.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/support.h"

namespace {

const std::string kTimelineCase = e2e::case_file("balance_1p2d.json");
const std::string kAgents = "workload.agents=32";

// A timeline file, indexed by the names its metadata gives to processes and threads.
struct Trace {
  nlohmann::json doc;
  std::map<int, std::string> process;                 // pid -> name
  std::map<std::pair<int, int>, std::string> thread;  // (pid, tid) -> name
  std::vector<nlohmann::json> complete, counters;     // "X" and "C" events
  std::string process_of(const nlohmann::json& e) const {
    auto it = process.find(e.at("pid").get<int>());
    return it == process.end() ? "" : it->second;
  }
  std::string thread_of(const nlohmann::json& e) const {
    auto it = thread.find({e.at("pid").get<int>(), e.at("tid").get<int>()});
    return it == thread.end() ? "" : it->second;
  }
};

Trace read_trace(const std::string& path) {
  Trace t;
  t.doc = e2e::read_json(path);
  REQUIRE(t.doc.at("traceEvents").is_array());
  for (const auto& e : t.doc.at("traceEvents")) {
    for (const char* k : {"ph", "ts", "pid", "tid", "name"}) REQUIRE(e.contains(k));
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") t.process[e.at("pid")] = e.at("args").at("name");
    if (ph == "M" && e.at("name") == "thread_name")
      t.thread[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name");
    if (ph == "X") t.complete.push_back(e);
    if (ph == "C") t.counters.push_back(e);
  }
  return t;
}

double arg(const nlohmann::json& e, const char* key) {
  return e.at("args").at(key).get<double>();
}

}  // namespace

TEST_CASE("Timeline: a 1P2D run -> passes, decode spans, every turn's phases and link counters", "[e2e]") {
  e2e::Scratch dir;
  const std::string path = (dir.dir / "tl.json").string();
  const auto res =
      e2e::run_ok(kTimelineCase, {kAgents, "outputs.timeline=" + path, "outputs.timeline_request_sample=1"});
  REQUIRE(std::filesystem::exists(path));
  CHECK(res.at("timeline").at("path") == path);
  CHECK(res.at("timeline").at("truncated") == false);
  CHECK(res.at("scenario").at("outputs").at("timeline") == path);
  const Trace t = read_trace(path);
  CHECK(t.doc.at("otherData").at("truncated") == false);
  CHECK(res.at("timeline").at("events") == t.doc.at("traceEvents").size());
  const auto& s = res.at("summary");
  REQUIRE(s.at("sim_end_s").get<double>() < 600);  // the default window holds the whole run

  // Forward passes on the prefill node's GPU threads: every computed token exactly once.
  double pass_tokens = 0, decode_steps = 0;
  int passes = 0, spans = 0;
  std::set<std::string> phases;
  int turns = 0;
  for (const auto& e : t.complete) {
    CHECK(e.at("dur").get<double>() >= 0);
    const std::string proc = t.process_of(e), thread = t.thread_of(e), name = e.at("name");
    if (name == "prefill" && proc == "n0 prefill") {
      CHECK(thread.rfind("gpu", 0) == 0);
      CHECK(arg(e, "requests") >= 1);
      pass_tokens += arg(e, "tokens");
      passes++;
    } else if (name == "decode" && (proc == "n1 decode" || proc == "n2 decode")) {
      CHECK(thread.rfind("gpu", 0) == 0);
      CHECK(arg(e, "batch") >= 1);
      decode_steps += arg(e, "batch") * arg(e, "steps");
      spans++;
    } else {
      REQUIRE(proc == "requests");
      CHECK(thread.rfind("agent ", 0) == 0);
      if (name.rfind("turn ", 0) == 0)
        turns++;
      else
        phases.insert(name);
    }
  }
  CHECK(passes > 0);
  CHECK(spans > 0);
  CHECK(pass_tokens == Approx(s.at("miss_tokens").get<double>()));
  // Each decode step advances every request of the batch by one token; the first comes from the prefill.
  CHECK(decode_steps == Approx(s.at("gen_tokens").get<double>() - s.at("turns_completed").get<double>()));
  CHECK(turns == s.at("turns_completed").get<int>());
  CHECK(phases.count("read") == 1);
  CHECK(phases.count("prefill") == 1);
  CHECK(phases.count("alloc") == 1);
  CHECK(phases.count("decode") == 1);
  std::set<std::string> agents;
  for (const auto& [k, name] : t.thread)
    if (t.process.at(k.first) == "requests") agents.insert(name);
  CHECK(agents.size() == 32);

  // Link counters: utilisation per node and resource, in [0, 1], SNIC and CNIC of every node.
  std::set<std::string> tracks;
  for (const auto& e : t.counters) {
    CHECK(t.process_of(e) == "links");
    tracks.insert(e.at("name"));
    for (const auto& [k, v] : e.at("args").items()) {
      CHECK(v.get<double>() >= 0);
      CHECK(v.get<double>() <= 1);
    }
  }
  for (const char* n : {"n0 snic", "n0 cnic", "n1 snic", "n1 cnic", "n2 snic", "n2 dram"})
    CHECK(tracks.count(n) == 1);
}

TEST_CASE("Timeline: a window and a tiny cap -> events inside the window only, and truncated at the cap",
          "[e2e]") {
  e2e::Scratch dir;
  const std::string path = (dir.dir / "window" / "tl.json").string();  // the directory is created
  e2e::run_ok(kTimelineCase, {kAgents, "outputs.timeline=" + path, "outputs.timeline_start_s=0.5",
                              "outputs.timeline_end_s=1.5"});
  const Trace w = read_trace(path);
  CHECK(w.complete.size() > 0);
  CHECK(w.counters.size() > 0);
  for (const auto& e : w.doc.at("traceEvents")) {
    CHECK(e.at("ts").get<double>() >= 0.5e6);
    CHECK(e.at("ts").get<double>() + e.value("dur", 0.0) <= 1.5e6);
  }

  const auto res =
      e2e::run_ok(kTimelineCase, {kAgents, "outputs.timeline=" + path, "outputs.timeline_max_events=40"});
  const Trace c = read_trace(path);
  CHECK(c.doc.at("otherData").at("truncated") == true);
  CHECK(c.doc.at("otherData").at("dropped_events").get<double>() > 0);
  CHECK(c.doc.at("traceEvents").size() <= 40);
  CHECK(c.doc.at("traceEvents").size() >= 30);  // filled up to the cap, give or take a track's names
  CHECK(res.at("timeline").at("truncated") == true);
}

TEST_CASE("Timeline: the same seed twice -> a byte-identical file, and off -> no key", "[e2e]") {
  e2e::Scratch dir;
  const std::string path = (dir.dir / "tl.json").string();
  const auto a = e2e::run_ok(kTimelineCase, {kAgents, "outputs.timeline=" + path});
  const std::string first = e2e::read_text(path);
  const auto b = e2e::run_ok(kTimelineCase, {kAgents, "outputs.timeline=" + path});
  CHECK(first.size() > 1000);
  CHECK(e2e::read_text(path) == first);
  CHECK(e2e::without_run_info(a) == e2e::without_run_info(b));

  const auto off = e2e::run_ok(kTimelineCase, {kAgents});
  CHECK_FALSE(off.contains("timeline"));
  CHECK(off.at("scenario").at("outputs").at("timeline") == "");
  // The simulation is the same with the timeline on or off.
  CHECK(off.at("summary") == a.at("summary"));
}

TEST_CASE("Timeline: an unwritable path -> exit 2 before the run, naming outputs.timeline", "[e2e]") {
  e2e::Scratch dir;
  const auto file = dir.dir / "plain";
  { std::ofstream(file) << "x"; }
  const auto r = e2e::run_dpsim(kTimelineCase, {"outputs.timeline=" + (file / "tl.json").string()});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.stderr_text, Catch::Matchers::Contains("outputs.timeline"));
  CHECK(r.result.is_null());
}
