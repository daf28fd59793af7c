#include "sim/workload/alibaba.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace wl = sim::workload;

namespace {

// One Alibaba line; `parent` is written as given ("-1", "null", or "" for no key).
std::string alibaba_line(int64_t chat, const std::string& parent, const std::string& ts, int64_t input,
                         int64_t output, const std::vector<int64_t>& ids, bool type_and_turn = true) {
  std::string s = "{\"chat_id\": " + std::to_string(chat);
  if (!parent.empty()) s += ", \"parent_chat_id\": " + parent;
  s += ", \"timestamp\": " + ts + ", \"input_length\": " + std::to_string(input) +
       ", \"output_length\": " + std::to_string(output);
  if (type_and_turn) s += ", \"type\": \"text\", \"turn\": 1";
  s += ", \"hash_ids\": [";
  for (size_t k = 0; k < ids.size(); ++k) s += (k ? ", " : "") + std::to_string(ids[k]);
  return s + "]}\n";
}

// The error message of parsing `text` as "x.jsonl" (REQUIRES: it fails).
std::string alibaba_parse_error(const std::string& text) {
  auto r = wl::parse_alibaba(text, "x.jsonl");
  REQUIRE_FALSE(r.is_ok());
  return r.status().message();
}

// Session A: chats 10 (line 1), 12 (line 3), 13 (line 4) and 15 (line 6), a sibling of 12; B: chats 11
// (line 2) and 14 (line 5); C: chat 16 (line 7). Blocks 1 and 2 start A's and B's prompts (a shared system
// prompt: no hit across sessions). Every hit is worked out in the test.
std::string small_alibaba_trace() {
  return alibaba_line(10, "-1", "5.0", 80, 20, {1, 2, 3, 4, 5}) +        // 1: A, 5 blocks
         alibaba_line(11, "", "6.5", 40, 21, {1, 2, 9}) +                // 2: B, no parent key
         alibaba_line(12, "10", "9", 100, 22, {1, 2, 3, 6, 7, 8, 10}) +  // 3: A, shares 3 of 1's 5
         alibaba_line(13, "12", "9.0", 50, 23, {1, 2, 3, 6}, false) +    // 4: A, 4 of 3's blocks
         alibaba_line(14, "11", "7.25", 60, 24, {1, 2, 11, 12}) +        // 5: B, 2's partial block differs
         alibaba_line(15, "10", "12.0", 96, 25, {1, 2, 3, 6, 7, 20}) +   // 6: A, a sibling of 3
         alibaba_line(16, "null", "5.0", 16, 26, {30});                  // 7: C, arrives with line 1
}

}  // namespace

TEST_CASE("Alibaba: hand-built trace -> sessions by parent chains, per-session hits, arrivals", "[unit]") {
  auto t = wl::parse_alibaba(small_alibaba_trace(), "small");
  REQUIRE(t.is_ok());
  REQUIRE(t->requests.size() == 7);
  struct Want {
    int64_t line, hit;
    int session, turn;
    double arrival_s;
  };
  // Arrival order: timestamps 5.0 (lines 1, 7: line order), 6.5, 7.25, 9 (lines 3, 4), 12.0; arrival =
  // timestamp - 5.0. Sessions numbered in order of first arrival: A 0, C 1, B 2.
  // Line 5: 2 of line 2's blocks (its third, partial one, differs) -> 32.
  // Line 3: the first 3 of line 1's 5 blocks -> 48.
  // Line 4: all 4 of its blocks are line 3's -> 64 tokens, capped at its input 50.
  // Line 6: 5 blocks of line 3 (an earlier request of its session, not its parent; its parent, line 1,
  // shares 3) -> 80. Lines 2 and 7: first requests (line 2 shares blocks 1, 2 with session A) -> 0.
  const Want want[7] = {{1, 0, 0, 0, 0.0},  {7, 0, 1, 0, 0.0},  {2, 0, 2, 0, 1.5}, {5, 32, 2, 1, 2.25},
                        {3, 48, 0, 1, 4.0}, {4, 50, 0, 2, 4.0}, {6, 80, 0, 3, 7.0}};
  const int64_t inputs[8] = {0, 80, 40, 100, 50, 60, 96, 16};  // by line
  for (size_t i = 0; i < 7; ++i) {
    INFO("request " << i);
    const wl::TraceRequest& r = t->requests[i];
    CHECK(r.line == want[i].line);
    CHECK(r.hit_tokens == want[i].hit);
    CHECK(r.session == want[i].session);
    CHECK(r.turn == want[i].turn);
    CHECK(r.arrival_s == Approx(want[i].arrival_s).margin(1e-12));
    CHECK(r.input_tokens == inputs[r.line]);
    CHECK(r.output_tokens == 19 + r.line);
  }
  CHECK(t->sessions == 3);
  CHECK(t->multi_turn_sessions == 2);
  CHECK(wl::token_weighted_hit(*t) == Approx(210.0 / 442.0));
  CHECK(t->source == "small");
}

TEST_CASE("Alibaba: a retry of the same prompt -> hits the whole prompt, the last partial block included",
          "[unit]") {
  // Line 2 repeats line 1's prompt (a regenerated answer): 3 blocks = 48 tokens, capped at 40.
  std::string text = alibaba_line(1, "-1", "0", 40, 5, {7, 8, 9}) +
                     alibaba_line(2, "1", "3.5", 70, 5, {7, 8, 9, 10, 11}) +
                     alibaba_line(3, "1", "8", 40, 5, {7, 8, 9});
  auto t = wl::parse_alibaba(text, "x.jsonl");
  REQUIRE(t.is_ok());
  CHECK(t->requests[1].hit_tokens == 48);  // line 2: 3 blocks of line 1
  CHECK(t->requests[2].hit_tokens == 40);  // line 3: all of line 1's (or 2's) blocks, capped
  CHECK(t->requests[2].turn == 2);
  CHECK(t->sessions == 1);
}

TEST_CASE("Alibaba: the sample file -> 142 requests in 40 sessions, hits as make_alibaba_sample.py counts",
          "[unit]") {
  auto t = wl::read_alibaba(std::string(DPSIM_SOURCE_DIR) + "/traces/synthetic/alibaba-sample.jsonl");
  REQUIRE(t.is_ok());
  CHECK(t->requests.size() == 142);
  CHECK(t->sessions == 40);
  CHECK(t->multi_turn_sessions == 34);
  int64_t hit = 0, input = 0, output = 0;
  for (const auto& r : t->requests) hit += r.hit_tokens, input += r.input_tokens, output += r.output_tokens;
  // The generator's brute-force count (traces/README.md, "Alibaba JSONL").
  CHECK(hit == 206141);
  CHECK(input == 315283);
  CHECK(output == 46437);
  CHECK(t->requests.front().arrival_s == 0.0);
  CHECK(t->requests.back().arrival_s == Approx(449.956).margin(1e-9));
}

TEST_CASE("Alibaba: bad records -> error names the file, the line and what was expected", "[unit]") {
  const std::string good = alibaba_line(1, "-1", "0.5", 20, 5, {1, 2});
  // Missing fields, wrong types, negative lengths.
  CHECK(
      alibaba_parse_error(good +
                          "{\"chat_id\": 2, \"timestamp\": 1, \"output_length\": 1, \"hash_ids\": []}\n") ==
      "x.jsonl:2: input_length: expected an integer in [1, 2147483647], got nothing (the field is missing)");
  CHECK(alibaba_parse_error(
            "{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}\n") ==
        "x.jsonl:1: chat_id: expected an integer >= 0, got nothing (the field is missing)");
  CHECK(alibaba_parse_error(good + alibaba_line(2, "-1", "\"soon\"", 20, 5, {1, 2})) ==
        "x.jsonl:2: timestamp: expected a number >= 0, got \"soon\"");
  CHECK(alibaba_parse_error(alibaba_line(2, "-1", "-0.5", 20, 5, {1, 2})) ==
        "x.jsonl:1: timestamp: expected a number >= 0, got -0.5");
  CHECK(alibaba_parse_error(good + alibaba_line(2, "-1", "1", -16, 5, {})) ==
        "x.jsonl:2: input_length: expected an integer in [1, 2147483647], got -16");
  CHECK(alibaba_parse_error(alibaba_line(2, "-1", "1", 16, -3, {1})) ==
        "x.jsonl:1: output_length: expected an integer in [1, 2147483647], got -3");
  CHECK(alibaba_parse_error(alibaba_line(-4, "-1", "1", 16, 3, {1})) ==
        "x.jsonl:1: chat_id: expected an integer >= 0, got -4");
  CHECK(alibaba_parse_error("{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, "
                            "\"type\": 3, \"hash_ids\": [0]}\n") ==
        "x.jsonl:1: type: expected a string, got 3");
  CHECK(alibaba_parse_error("{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, "
                            "\"turn\": -1, \"hash_ids\": [0]}\n") ==
        "x.jsonl:1: turn: expected an integer >= 0, got -1");
  CHECK(alibaba_parse_error("{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, "
                            "\"hash_ids\": [0], \"session\": 3}\n")
            .find("x.jsonl:1: session: unknown key (expected one of: chat_id, hash_ids,") == 0);
  // hash_ids: not an array, not integers, the wrong count.
  CHECK(alibaba_parse_error("{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, "
                            "\"hash_ids\": \"1,2\"}\n") ==
        "x.jsonl:1: hash_ids: expected an array of block ids, got \"1,2\"");
  CHECK(alibaba_parse_error(
            "{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 1, \"output_length\": 1}\n") ==
        "x.jsonl:1: hash_ids: expected an array of block ids, got nothing (the field is missing)");
  CHECK(alibaba_parse_error("{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 20, \"output_length\": 1, "
                            "\"hash_ids\": [1, \"a\"]}\n") ==
        "x.jsonl:1: hash_ids[1]: expected an integer >= 0, got \"a\"");
  CHECK(alibaba_parse_error("{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 20, \"output_length\": 1, "
                            "\"hash_ids\": [1, 2.5]}\n") ==
        "x.jsonl:1: hash_ids[1]: expected an integer >= 0, got 2.5");
  CHECK(alibaba_parse_error(good + alibaba_line(2, "1", "1", 33, 5, {1, 2})) ==
        "x.jsonl:2: hash_ids: expected 3 block ids (ceil(33 / 16)), got 2");
  // Parents: unknown, later line, itself, a cycle, not an id, earlier in time than the child.
  CHECK(alibaba_parse_error(good + alibaba_line(2, "99", "1", 16, 5, {1})) ==
        "x.jsonl:2: parent_chat_id: 99 is not the chat_id of any line");
  CHECK(
      alibaba_parse_error(alibaba_line(1, "2", "1", 16, 5, {1}) + alibaba_line(2, "-1", "0", 16, 5, {1})) ==
      "x.jsonl:1: parent_chat_id: 2 is the chat_id of line 2, a later line (expected a parent on an earlier "
      "line)");
  CHECK(alibaba_parse_error(good + alibaba_line(5, "5", "1", 16, 5, {1})) ==
        "x.jsonl:2: parent_chat_id: 5 is the request's own chat_id");
  CHECK(alibaba_parse_error(alibaba_line(1, "2", "1", 16, 5, {1}) + alibaba_line(2, "1", "1", 16, 5, {1}))
            .find("x.jsonl:1: parent_chat_id: 2 is the chat_id of line 2, a later line") == 0);
  CHECK(alibaba_parse_error(good + alibaba_line(2, "-2", "1", 16, 5, {1})) ==
        "x.jsonl:2: parent_chat_id: expected -1 or null (no parent) or the chat_id of an earlier line (an "
        "integer >= 0), got -2");
  CHECK(alibaba_parse_error(good + alibaba_line(2, "\"1\"", "1", 16, 5, {1}))
            .find("x.jsonl:2: parent_chat_id: expected") == 0);
  CHECK(alibaba_parse_error(good + alibaba_line(2, "1", "0.25", 16, 5, {1})) ==
        "x.jsonl:2: timestamp: expected >= 0.5 (its parent's, line 1), got 0.25");
  CHECK(alibaba_parse_error(good + alibaba_line(1, "-1", "1", 16, 5, {1})) ==
        "x.jsonl:2: chat_id: duplicate 1 (first on line 1)");
  // Lines that are not records.
  CHECK(alibaba_parse_error(good + "{\"chat_id\": 2, \"timestamp\": 1").find("x.jsonl:2:") == 0);
  CHECK(alibaba_parse_error(good + "{\"chat_id\": 2, \"timestamp\": 1").find("malformed JSON") !=
        std::string::npos);
  CHECK(alibaba_parse_error(good + "[1, 2]\n").find("x.jsonl:2: expected a JSON object") == 0);
  CHECK(alibaba_parse_error(good + "\n" + good) ==
        "x.jsonl:2: blank line (the format holds exactly one request per line)");
  CHECK(alibaba_parse_error(good + "{\"chat_id\": 2, \"x\xff\": 1}\n") ==
        "x.jsonl:2: invalid UTF-8 (byte 0xff at column 18)");
  CHECK(alibaba_parse_error("") == "x.jsonl: empty file: expected one request per line");
}

TEST_CASE("Alibaba: missing file and unknown format -> errors naming them", "[unit]") {
  auto missing = wl::read_alibaba("/nonexistent/dpsim/trace.jsonl");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("/nonexistent/dpsim/trace.jsonl: cannot open") == 0);
  auto by_name = wl::read_request_trace("alibaba", "/nonexistent/dpsim/trace.jsonl");
  REQUIRE_FALSE(by_name.is_ok());
  CHECK(by_name.status().message() == missing.status().message());
  auto unknown = wl::read_request_trace("bailian", "t.jsonl");
  REQUIRE_FALSE(unknown.is_ok());
  CHECK(unknown.status().message() ==
        "t.jsonl: unknown request-trace format \"bailian\" (expected mooncake, azure or alibaba)");
}
