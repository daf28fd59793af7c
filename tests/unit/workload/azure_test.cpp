#include "sim/workload/azure.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/workload/public_traces.h"

namespace wl = sim::workload;

namespace {

using sim::testing::public_trace;

const char* kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

// The error message of parsing `text` as "x.csv" (REQUIRES: it fails).
std::string azure_parse_error(const std::string& text) {
  auto r = wl::parse_azure(text, "x.csv");
  REQUIRE_FALSE(r.is_ok());
  return r.status().message();
}

}  // namespace

TEST_CASE("Azure: public 2023 traces -> every row a single-turn request, arrivals from the first row",
          "[unit]") {
  auto code = wl::read_azure(public_trace("azure2023_AzureLLMInferenceTrace_code.csv"));
  REQUIRE(code.is_ok());
  REQUIRE(code->requests.size() == 8819);
  CHECK(code->sessions == 8819);
  CHECK(code->multi_turn_sessions == 0);
  CHECK(wl::token_weighted_hit(*code) == 0.0);
  // First row 2023-11-16 18:17:03.9799600,4808,10; last 2023-11-16 19:14:19.9280160.
  CHECK(code->requests.front().arrival_s == 0.0);
  CHECK(code->requests.front().input_tokens == 4808);
  CHECK(code->requests.front().output_tokens == 10);
  CHECK(code->requests.back().arrival_s == Approx(3435.948056).margin(1e-9));
  for (size_t i = 0; i < code->requests.size(); ++i) {
    const wl::TraceRequest& r = code->requests[i];
    REQUIRE(r.session == static_cast<int>(i));
    REQUIRE(r.turn == 0);
    REQUIRE(r.hit_tokens == 0);
    if (i > 0) REQUIRE(r.arrival_s >= code->requests[i - 1].arrival_s);
  }

  auto conv = wl::read_azure(public_trace("azure2023_AzureLLMInferenceTrace_conv.csv"));
  REQUIRE(conv.is_ok());
  CHECK(conv->requests.size() == 19366);
  CHECK(conv->requests.front().input_tokens == 374);
  // 18:15:46.6805900 -> 19:14:08.4025270
  CHECK(conv->requests.back().arrival_s == Approx(3501.721937).margin(1e-9));
}

TEST_CASE("Azure: CRLF, fractions, a leap day and rows out of order -> exact relative arrivals", "[unit]") {
  std::string text = std::string("TIMESTAMP,ContextTokens,GeneratedTokens\r\n") +
                     "2024-02-28 23:59:59.5,100,1\r\n"  // first
                     "2024-03-01 00:00:00.250000001,200,2\r\n"
                     "2024-02-28 23:59:59,300,3\r\n"  // the earliest: arrival 0
                     "2024-02-28 23:59:59.5,400,4";   // ties with row 1, after it; no final newline
  auto t = wl::parse_azure(text, "mem");
  REQUIRE(t.is_ok());
  REQUIRE(t->requests.size() == 4);
  CHECK(t->requests[0].input_tokens == 300);
  CHECK(t->requests[0].arrival_s == 0.0);
  CHECK(t->requests[1].input_tokens == 100);
  CHECK(t->requests[1].arrival_s == 0.5);
  CHECK(t->requests[2].input_tokens == 400);
  CHECK(t->requests[2].arrival_s == 0.5);
  CHECK(t->requests[3].input_tokens == 200);
  CHECK(t->requests[3].output_tokens == 2);
  CHECK(t->requests[3].arrival_s == Approx(86401.250000001).epsilon(1e-15));  // 2024 is a leap year
  CHECK(t->requests[3].session == 3);
  CHECK(t->source == "mem");

  auto y2023 =
      wl::parse_azure(std::string(kHeader) + "2023-02-28 12:00:00,1,1\n2023-03-01 12:00:00,1,1\n", "m");
  REQUIRE(y2023.is_ok());
  CHECK(y2023->requests[1].arrival_s == 86400.0);
  auto y2000 =
      wl::parse_azure(std::string(kHeader) + "1999-12-31 00:00:00,1,1\n2000-03-01 00:00:00,1,1\n", "m");
  REQUIRE(y2000.is_ok());
  CHECK(y2000->requests[1].arrival_s == 61.0 * 86400);  // 2000 is a leap year (divisible by 400)
  auto y1900 =
      wl::parse_azure(std::string(kHeader) + "1900-02-28 00:00:00,1,1\n1900-03-01 00:00:00,1,1\n", "m");
  REQUIRE(y1900.is_ok());
  CHECK(y1900->requests[1].arrival_s == 86400.0);  // 1900 is not
}

TEST_CASE("Azure: malformed input -> error names the file, the line and the column", "[unit]") {
  const std::string h = kHeader;
  const std::string good = "2023-11-16 18:17:03.9799600,4808,10\n";
  CHECK(azure_parse_error("") ==
        "x.csv: empty file: expected the header TIMESTAMP,ContextTokens,GeneratedTokens and one request per "
        "line");
  CHECK(azure_parse_error(h) == "x.csv: no requests after the header");
  CHECK(azure_parse_error("TIMESTAMP,ContextTokens\n" + good) ==
        "x.csv:1: header: expected TIMESTAMP,ContextTokens,GeneratedTokens, got \"TIMESTAMP,ContextTokens\"");
  CHECK(azure_parse_error(h + good + "2023-11-16 18:17:04.0319600,3180\n") ==
        "x.csv:3: expected 3 comma-separated fields (TIMESTAMP,ContextTokens,GeneratedTokens), got 2");
  CHECK(azure_parse_error(h + good + good + "2023-11-16 18:17:04,1,2,3\n").find("x.csv:4: expected 3") == 0);
  CHECK(azure_parse_error(h + "2023-11-16 18:17:04.0319600,0,8\n") ==
        "x.csv:2: ContextTokens: expected an integer in [1, 2147483647], got \"0\"");
  CHECK(azure_parse_error(h + "2023-11-16 18:17:04.0319600,-5,8\n") ==
        "x.csv:2: ContextTokens: expected an integer in [1, 2147483647], got \"-5\"");
  CHECK(azure_parse_error(h + "2023-11-16 18:17:04.0319600,12.5,8\n").find("x.csv:2: ContextTokens:") == 0);
  CHECK(azure_parse_error(h + "2023-11-16 18:17:04.0319600, 12,8\n").find("x.csv:2: ContextTokens:") == 0);
  CHECK(azure_parse_error(h + "2023-11-16 18:17:04.0319600,12,\n") ==
        "x.csv:2: GeneratedTokens: expected an integer in [1, 2147483647], got \"\"");
  CHECK(azure_parse_error(h + "2023-11-16 18:17:04.0319600,12,2147483648\n")
            .find("x.csv:2: GeneratedTokens:") == 0);
  const char* bad_times[] = {"2023-13-16 18:17:04",     "2023-02-29 00:00:00",
                             "2023-11-16 24:00:00",     "2023-11-16 18:60:00",
                             "2023-11-16 18:17",        "2023-11-16T18:17:04",
                             "2023-11-16 18:17:04.",    "2023-11-16 18:17:04.1234567890",
                             "2023-11-16 18:17:04.12a", "0000-01-01 00:00:00",
                             "23-11-16 18:17:04.5"};
  for (const char* bad : bad_times) {
    INFO(bad);
    CHECK(azure_parse_error(h + good + bad + ",1,1\n")
              .find("x.csv:3: TIMESTAMP: expected a date and time YYYY-MM-DD HH:MM:SS[.fraction of 1-9 "
                    "digits], got \"") == 0);
  }
  CHECK(azure_parse_error(h + good + "\n" + good) ==
        "x.csv:3: blank line (the format holds exactly one request per line)");
  CHECK(azure_parse_error(h + "2023-11-16 18:17:04\xe9,1,1\n") ==
        "x.csv:2: invalid UTF-8 (byte 0xe9 at column 20)");
  auto missing = wl::read_azure("/nonexistent/dpsim/trace.csv");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("/nonexistent/dpsim/trace.csv: cannot open") == 0);
}
