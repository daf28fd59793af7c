#include "sim/workload/mooncake.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/workload/public_traces.h"

namespace wl = sim::workload;

namespace {

using sim::testing::public_trace;

// One Mooncake line.
std::string mooncake_line(int64_t ts, int64_t input, int64_t output, const std::vector<int64_t>& ids) {
  std::string s = "{\"timestamp\": " + std::to_string(ts) + ", \"input_length\": " + std::to_string(input) +
                  ", \"output_length\": " + std::to_string(output) + ", \"hash_ids\": [";
  for (size_t k = 0; k < ids.size(); ++k) s += (k ? ", " : "") + std::to_string(ids[k]);
  return s + "]}\n";
}

// The error message of parsing `text` as "x.jsonl" (REQUIRES: it fails).
std::string mooncake_parse_error(const std::string& text, const wl::MooncakeOptions& o = {}) {
  auto r = wl::parse_mooncake(text, "x.jsonl", o);
  REQUIRE_FALSE(r.is_ok());
  return r.status().message();
}

// Block 0 is a system prompt. Conversation A: lines 2, 4, 6; B: line 3; lines 1, 5, 7 hold only the
// system prompt as a full block. Hit, session and arrival of each line are worked out in the test.
std::string small_mooncake_trace() {
  return mooncake_line(0, 1000, 10, {0, 1}) +                       // 1: full [0], partial 1
         mooncake_line(0, 1600, 20, {0, 2, 3, 4}) +                 // 2: A turn 0, full [0 2 3]
         mooncake_line(3000, 2100, 30, {0, 5, 6, 7, 8}) +           // 3: B
         mooncake_line(3000, 2600, 40, {0, 2, 3, 9, 10, 11}) +      // 4: A turn 1, full [0 2 3 9 10]
         mooncake_line(6000, 512, 50, {0}) +                        // 5: exactly the system prompt
         mooncake_line(9000, 3100, 60, {0, 2, 3, 9, 10, 11, 12}) +  // 6: A turn 2 (block 11 now full)
         mooncake_line(9000, 600, 70, {0, 13});                     // 7
}

}  // namespace

TEST_CASE("Mooncake: conversation trace -> 37.4% infinite-cache hit and about 2,000 multi-turn sessions",
          "[unit]") {
  auto t = wl::read_mooncake(public_trace("mooncake_conversation_trace.jsonl"));
  REQUIRE(t.is_ok());
  REQUIRE(t->requests.size() == 12031);
  CHECK(wl::token_weighted_hit(*t) == Approx(0.374).margin(0.01));
  CHECK(t->multi_turn_sessions >= 1800);
  CHECK(t->multi_turn_sessions <= 2200);

  // Sessions: ids in order of first appearance, turns 0, 1, 2, ... within each.
  std::vector<int> turns_seen(static_cast<size_t>(t->sessions), 0);
  int next_new = 0;
  int64_t follow_hit = 0, follow_input = 0;
  for (const wl::TraceRequest& r : t->requests) {
    REQUIRE(r.session >= 0);
    REQUIRE(r.session <= next_new);
    if (r.session == next_new) ++next_new;
    CHECK(r.turn == turns_seen[static_cast<size_t>(r.session)]++);
    if (r.turn > 0) follow_hit += r.hit_tokens, follow_input += r.input_tokens;
  }
  CHECK(next_new == t->sessions);
  int multi = 0, multi_turns = 0;
  for (int n : turns_seen) {
    if (n > 1) ++multi, multi_turns += n;
  }
  CHECK(multi == t->multi_turn_sessions);
  // SOURCES.md: 2.9 turns per multi-turn session and about 86% hit on follow-up turns.
  CHECK(static_cast<double>(multi_turns) / multi == Approx(2.9).margin(0.15));
  CHECK(static_cast<double>(follow_hit) / static_cast<double>(follow_input) == Approx(0.86).margin(0.02));

  // 3 s timestamp buckets are spread: arrivals strictly increase, starting at 0 and spanning the hour.
  CHECK(t->requests.front().arrival_s == 0.0);
  for (size_t i = 1; i < t->requests.size(); ++i)
    REQUIRE(t->requests[i].arrival_s > t->requests[i - 1].arrival_s);
  CHECK(t->requests.back().arrival_s > 3536.999);
  CHECK(t->requests.back().arrival_s < 3536.999 + 3.1);
  CHECK(t->source == public_trace("mooncake_conversation_trace.jsonl"));
}

TEST_CASE("Mooncake: synthetic trace -> parses with every follow-up turn chained", "[unit]") {
  auto t = wl::read_mooncake(public_trace("mooncake_synthetic_trace.jsonl"));
  REQUIRE(t.is_ok());
  REQUIRE(t->requests.size() == 3993);
  int max_turn = 0;
  for (const wl::TraceRequest& r : t->requests) {
    CHECK(r.hit_tokens <= r.input_tokens);
    CHECK(r.output_tokens >= 1);
    max_turn = std::max(max_turn, r.turn);
  }
  CHECK(t->multi_turn_sessions > 0);
  CHECK(max_turn < 24);  // SOURCES.md: sessions of at most 24 turns
}

TEST_CASE("Mooncake: hand-built trace -> hits, sessions and spread arrivals as documented", "[unit]") {
  wl::MooncakeOptions o;
  o.shared_fanout = 2;  // block 0 is followed by blocks 2, 5 (full): shared; nothing else is
  auto t = wl::parse_mooncake(small_mooncake_trace(), "small", o);
  REQUIRE(t.is_ok());
  REQUIRE(t->requests.size() == 7);
  struct Want {
    int64_t hit;
    int session, turn;
    double arrival_s;
  };
  // Line 5: its one block is persisted, so it hits its whole prompt (capped at input_length).
  // Line 6: 6 full blocks persisted (block 11 was line 4's partial block), its partial block 12 is not.
  // The 9 s bucket is the last: its gap is the mean gap between distinct timestamps, 3 s.
  const Want want[7] = {{0, 0, 0, 0.0},   {512, 1, 0, 1.5},  {512, 2, 0, 3.0}, {1536, 1, 1, 4.5},
                        {512, 3, 0, 6.0}, {3072, 1, 2, 9.0}, {512, 4, 0, 10.5}};
  for (size_t i = 0; i < 7; ++i) {
    INFO("request " << i);
    const wl::TraceRequest& r = t->requests[i];
    CHECK(r.hit_tokens == want[i].hit);
    CHECK(r.session == want[i].session);
    CHECK(r.turn == want[i].turn);
    CHECK(r.arrival_s == Approx(want[i].arrival_s).margin(1e-12));
    CHECK(r.output_tokens == 10 * static_cast<int64_t>(i + 1));
  }
  CHECK(t->sessions == 5);
  CHECK(t->multi_turn_sessions == 1);
  CHECK(wl::token_weighted_hit(*t) == Approx(6656.0 / 11512.0));

  SECTION("a fan-out threshold above the system prompt's -> everything chains through it") {
    auto all = wl::parse_mooncake(small_mooncake_trace(), "small");  // default 16
    REQUIRE(all.is_ok());
    CHECK(all->sessions == 1);
    CHECK(all->requests.back().turn == 6);
  }
  SECTION("spreading off -> requests of one bucket arrive together") {
    o.spread_buckets = false;
    auto flat = wl::parse_mooncake(small_mooncake_trace(), "small", o);
    REQUIRE(flat.is_ok());
    CHECK(flat->requests[1].arrival_s == 0.0);
    CHECK(flat->requests[6].arrival_s == 9.0);
  }
}

TEST_CASE("Mooncake: lines out of time order -> sorted, ties in line order, hits in arrival order",
          "[unit]") {
  std::string text = mooncake_line(5000, 1024, 1, {0, 1}) + mooncake_line(2000, 1024, 2, {0, 1}) +
                     mooncake_line(2000, 600, 3, {0, 2});
  auto t = wl::parse_mooncake(text, "x.jsonl");
  REQUIRE(t.is_ok());
  CHECK(t->requests[0].output_tokens == 2);
  CHECK(t->requests[1].output_tokens == 3);
  CHECK(t->requests[2].output_tokens == 1);
  CHECK(t->requests[0].arrival_s == 0.0);
  CHECK(t->requests[1].arrival_s == Approx(1.5));
  CHECK(t->requests[2].arrival_s == 3.0);
  CHECK(t->requests[0].hit_tokens == 0);
  CHECK(t->requests[1].hit_tokens == 512);
  CHECK(t->requests[2].hit_tokens == 1024);  // line 1 arrives last and finds both blocks persisted
  // Line 3 (full blocks [0]) does not continue line 2 ([0 1] is not a prefix of [0 2]). Line 1 could
  // continue line 2 or line 3: the rule takes the latest, line 3.
  CHECK(t->requests[0].session == 0);
  CHECK(t->requests[1].session == 1);
  CHECK(t->requests[2].session == 1);
  CHECK(t->requests[2].turn == 1);
  CHECK(t->sessions == 2);
}

TEST_CASE("Mooncake: malformed lines -> error names the file, the line and the field", "[unit]") {
  std::string good = mooncake_line(0, 1000, 10, {0, 1});
  CHECK(mooncake_parse_error(good + "{\"timestamp\": 0, \"input_length\": 10").find("x.jsonl:2:") == 0);
  CHECK(mooncake_parse_error(good + "{\"timestamp\": 0, \"input_length\": 10").find("malformed JSON") !=
        std::string::npos);
  CHECK(mooncake_parse_error(good + good + mooncake_line(0, 1000, 10, {0})) ==
        "x.jsonl:3: hash_ids: expected 2 block ids (ceil(1000 / 512)), got 1");
  CHECK(mooncake_parse_error(good + mooncake_line(0, 0, 10, {})) ==
        "x.jsonl:2: input_length: expected an integer in [1, 2147483647], got 0");
  CHECK(mooncake_parse_error(good + mooncake_line(0, -5, 10, {})) ==
        "x.jsonl:2: input_length: expected an integer in [1, 2147483647], got -5");
  CHECK(mooncake_parse_error(mooncake_line(0, 100, 0, {0})) ==
        "x.jsonl:1: output_length: expected an integer in [1, 2147483647], got 0");
  CHECK(mooncake_parse_error(mooncake_line(-1, 100, 1, {0})) ==
        "x.jsonl:1: timestamp: expected an integer >= 0, got -1");
  CHECK(mooncake_parse_error(
            "{\"timestamp\": 1.5, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}")
            .find("x.jsonl:1: timestamp: expected an integer") == 0);
  CHECK(mooncake_parse_error(good + mooncake_line(0, 100, 1, {-3})) ==
        "x.jsonl:2: hash_ids[0]: expected an integer >= 0, got -3");
  CHECK(mooncake_parse_error(
            "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [\"a\"]}") ==
        "x.jsonl:1: hash_ids[0]: expected an integer >= 0, got \"a\"");
  CHECK(mooncake_parse_error(
            "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": 7}") ==
        "x.jsonl:1: hash_ids: expected an array of block ids, got 7");
  CHECK(mooncake_parse_error("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}") ==
        "x.jsonl:1: hash_ids: expected an array of block ids, got nothing (the field is missing)");
  CHECK(
      mooncake_parse_error("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0], "
                           "\"session\": 3}")
          .find("x.jsonl:1: session: unknown key") == 0);
  CHECK(mooncake_parse_error(good + "[1, 2]\n").find("x.jsonl:2: expected a JSON object") == 0);
  CHECK(mooncake_parse_error(good + "\n" + good) ==
        "x.jsonl:2: blank line (the format holds exactly one request per line)");
  CHECK(mooncake_parse_error(good + "{\"timestamp\": 0, \"x\xff\": 1}\n") ==
        "x.jsonl:2: invalid UTF-8 (byte 0xff at column 20)");
  CHECK(mooncake_parse_error("") == "x.jsonl: empty file: expected one request per line");
  CHECK(mooncake_parse_error(
            "{\"timestamp\": 1e999, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}")
            .find("x.jsonl:1: ") == 0);
}

TEST_CASE("Mooncake: an id after two different predecessors -> prefix-consistency error", "[unit]") {
  std::string text = mooncake_line(0, 1000, 1, {0, 1}) + mooncake_line(0, 1000, 1, {2, 1});
  CHECK(mooncake_parse_error(text) ==
        "x.jsonl:2: hash_ids[1]: expected block 1 after block 0 (as on line 1; an id names a block and its "
        "whole prefix), got it after block 2");
  CHECK(mooncake_parse_error(mooncake_line(0, 1000, 1, {4, 4}))
            .find("x.jsonl:1: hash_ids[1]: expected block 4 first") == 0);
}

TEST_CASE("Mooncake: bad options and missing file -> errors", "[unit]") {
  wl::MooncakeOptions o;
  o.shared_fanout = 1;
  CHECK(mooncake_parse_error(mooncake_line(0, 1, 1, {0}), o) ==
        "x.jsonl: shared_fanout: expected an integer >= 2, got 1");
  auto missing = wl::read_mooncake("/nonexistent/dpsim/trace.jsonl");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("/nonexistent/dpsim/trace.jsonl: cannot open") == 0);
}
