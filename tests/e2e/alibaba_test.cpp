// End-to-end replay of an Alibaba-format trace (workload.trace_format = alibaba): the synthetic sample
// traces/synthetic/alibaba-sample.jsonl through scenarios/public/alibaba-sample.json, online and offline,
// against totals counted without dpsim's reader; and a bad record through `dpsim run` (exit 2, the line).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

const std::string kAlibabaScenario = e2e::repo_file("scenarios/public/alibaba-sample.json");
const std::string kSample = e2e::repo_file("traces/synthetic/alibaba-sample.jsonl");

// Totals a replay of the sample must show: make_alibaba_sample.py's brute-force count (traces/README.md),
// the replayed hit capped at input - 1 per request.
constexpr int64_t kRequests = 142, kSessions = 40;
constexpr int64_t kReplayedHit = 206130, kInput = 315283, kOutput = 46437;

struct Totals {
  int64_t requests = 0, sessions = 0, hit = 0, input = 0, output = 0;
};

// A second count from the raw lines: sessions by following parent_chat_id, and each request's hit = the
// longest common prefix of block ids with any earlier request (by timestamp, then line) of its session,
// x 16 tokens, capped at input_length and then at input_length - 1 as the replay does.
Totals recount(const std::string& path) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) rows.push_back(nlohmann::json::parse(l));
  std::map<int64_t, size_t> row_of;
  std::vector<size_t> root(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    row_of[rows[i].at("chat_id").get<int64_t>()] = i;
    const int64_t p = rows[i].at("parent_chat_id").get<int64_t>();
    root[i] = p < 0 ? i : root[row_of.at(p)];
  }
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rows[a].at("timestamp").get<double>() < rows[b].at("timestamp").get<double>();
  });
  Totals t;
  std::map<size_t, std::vector<std::vector<int64_t>>> seen;  // session root -> earlier requests' ids
  for (size_t i : order) {
    const auto ids = rows[i].at("hash_ids").get<std::vector<int64_t>>();
    const int64_t input = rows[i].at("input_length").get<int64_t>();
    size_t best = 0;
    for (const auto& other : seen[root[i]]) {
      size_t m = 0;
      while (m < ids.size() && m < other.size() && ids[m] == other[m]) ++m;
      best = std::max(best, m);
    }
    seen[root[i]].push_back(ids);
    t.hit += std::min(std::min(input, static_cast<int64_t>(best) * 16), input - 1);
    t.input += input;
    t.output += rows[i].at("output_length").get<int64_t>();
    ++t.requests;
  }
  t.sessions = static_cast<int64_t>(seen.size());
  return t;
}

using e2e::num;

void check_replay(const nlohmann::json& r) {
  CHECK(num(r, "turns_completed") == kRequests);
  CHECK(num(r, "agents") == kSessions);
  CHECK(num(r, "hit_tokens") == kReplayedHit);
  CHECK(num(r, "miss_tokens") == kInput - kReplayedHit);
  CHECK(num(r, "gen_tokens") == kOutput);
  CHECK(num(r, "hit_rate") == Approx(static_cast<double>(kReplayedHit) / kInput));
  CHECK(r.at("summary").at("stopped_by") == "all_turns_done");
  // Requests arrive at their timestamps: the run lasts at least until the last one, 449.956 s after the
  // first.
  CHECK(num(r, "sim_end_s") >= 449.956);
}

}  // namespace

TEST_CASE("Alibaba sample: the recount from the raw lines -> the generator's totals", "[e2e]") {
  const Totals t = recount(kSample);
  CHECK(t.requests == kRequests);
  CHECK(t.sessions == kSessions);
  CHECK(t.hit == kReplayedHit);
  CHECK(t.input == kInput);
  CHECK(t.output == kOutput);
}

TEST_CASE("Alibaba sample: online replay -> every request completes with the sessions' prefix hits",
          "[e2e]") {
  const auto r = e2e::run_ok(kAlibabaScenario, {"sim.progress=false"}, 120);
  CHECK(r.at("scenario").at("workload").at("mode") == "online");
  check_replay(r);
}

// The per-turn records (outputs.requests): (session, turn) -> issue and done times.
struct Issue {
  double issue = 0, done = 0;
};
std::map<std::pair<int, int>, Issue> issues_of(const std::string& csv) {
  const auto rows = e2e::read_csv(csv);
  REQUIRE(rows.size() > 1);
  const auto& head = rows.front();
  auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(head.begin(), head.end(), name) - head.begin());
  };
  std::map<std::pair<int, int>, Issue> out;
  for (size_t i = 1; i < rows.size(); ++i)
    out[{std::stoi(rows[i].at(col("agent"))), std::stoi(rows[i].at(col("turn")))}] = {
        std::stod(rows[i].at(col("issue_s"))), std::stod(rows[i].at(col("done_s")))};
  return out;
}

TEST_CASE("Alibaba sample: offline replay -> the same requests and hits, in a closed loop", "[e2e]") {
  e2e::Scratch scratch;
  const std::string csv = (scratch.dir / "turns.csv").string();
  const auto r = e2e::run_ok(kAlibabaScenario, {"workload.mode=offline", "outputs.requests=" + csv}, 120);
  CHECK(r.at("scenario").at("workload").at("mode") == "offline");
  CHECK(num(r, "turns_completed") == kRequests);
  CHECK(num(r, "agents") == kSessions);
  CHECK(num(r, "hit_tokens") == kReplayedHit);
  CHECK(num(r, "gen_tokens") == kOutput);
  CHECK(r.at("summary").at("stopped_by") == "all_turns_done");
  // Every session starts at 0, each later turn after its predecessor's end; the trace's idle time between
  // sessions is gone, so the run ends well before the trace's 450 s.
  int first = 0;
  for (const auto& [key, t] : issues_of(csv)) {
    if (key.second == 0) {
      first++;
      CHECK(t.issue == 0);
    } else {
      CHECK(t.issue >= issues_of(csv).at({key.first, key.second - 1}).done);
    }
  }
  CHECK(first == kSessions);
  CHECK(num(r, "sim_end_s") < 400);
}

// One session of four requests written in the Alibaba format: arrivals 0, 30, 45 and 100 s, each prompt
// the previous one plus new blocks (so each follow-up hits its parent's whole prompt), 300 tokens out.
std::string one_session_trace(const std::filesystem::path& dir) {
  const std::string path = (dir / "one-session.jsonl").string();
  std::ofstream out(path);
  const double at[] = {0, 30, 45, 100};
  const int blocks[] = {64, 128, 160, 256};
  for (int i = 0; i < 4; ++i) {
    nlohmann::json row = {{"chat_id", i},         {"parent_chat_id", i - 1},
                          {"timestamp", at[i]},   {"input_length", blocks[i] * 16},
                          {"output_length", 300}, {"type", "text"},
                          {"turn", i + 1},        {"hash_ids", nlohmann::json::array()}};
    for (int b = 0; b < blocks[i]; ++b) row["hash_ids"].push_back(b);
    out << row.dump() << "\n";
  }
  return path;
}

TEST_CASE("Alibaba replay, closed loop: a lone session on an idle cluster -> issued at its trace's arrivals",
          "[e2e]") {
  // Offline, each follow-up waits its think time after its parent's end: the arrival gap less the parent's
  // unloaded latency. Alone on the cluster a turn takes about that latency (tests/e2e/slo_relative_test.cpp
  // measures 0.97-1.00 of it), so the turns go out at the trace's arrivals. A think time taken as the whole
  // arrival gap would issue turn 3 later by the three earlier turns' times, about 8 s each (300 tokens at
  // ~26 ms).
  e2e::Scratch scratch;
  const std::string trace = one_session_trace(scratch.dir);
  const std::string csv = (scratch.dir / "turns.csv").string();
  const double at[] = {0, 30, 45, 100};
  for (const char* mode : {"offline", "online"}) {
    INFO(mode);
    e2e::run_ok(kAlibabaScenario,
                {std::string("workload.mode=") + mode, "workload.trace=" + trace, "outputs.requests=" + csv});
    const auto turns = issues_of(csv);
    REQUIRE(turns.size() == 4);
    for (int k = 1; k < 4; ++k) {
      INFO("turn " << k);
      const Issue& t = turns.at({0, k});
      CHECK(turns.at({0, k - 1}).done < at[k]);  // the parent ended before the next arrival
      CHECK(t.issue == Approx(at[k]).margin(0.1));
    }
  }
}

TEST_CASE("Alibaba trace: a parent_chat_id of no line -> exit 2 naming the file, the line and the field",
          "[e2e]") {
  const std::string bad = e2e::repo_file("tests/bad_inputs/files/alibaba_unknown_parent.jsonl");
  const e2e::Run run = e2e::run_dpsim(kAlibabaScenario, {"workload.trace=" + bad});
  INFO(run.command << "\nstderr: " << run.stderr_text);
  CHECK(run.exit_code == 2);
  CHECK(run.result.is_null());
  CHECK_THAT(run.stderr_text,
             Catch::Matchers::Contains(bad + ":3: parent_chat_id: 7 is not the chat_id of any line"));
}
