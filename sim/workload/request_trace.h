// RequestTrace: a timestamped list of requests, the common output of the public trace readers
// (mooncake.h, azure.h, alibaba.h; formats and rules in traces/README.md, "Public traces").
//
// A request's prompt has input_tokens tokens; hit_tokens of them have KV already persisted by earlier
// requests (read from storage), the miss (input_tokens - hit_tokens) is computed; output_tokens (>= 1)
// are generated. Requests are grouped into sessions (rebuilt by the reader): session ids are
// 0 .. sessions-1 in order of first appearance, turn is the request's index within its session in
// arrival order (0 for the first).
//
// Also: the reader of a format by name, and helpers shared by the line-based readers (UTF-8 check, line
// splitting, JSON lines).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"

namespace sim::workload {

// The largest token count a trace may give: the public traces' producers write lengths as int32.
inline constexpr int64_t kMaxTraceTokens = 2147483647;

struct TraceRequest {
  double arrival_s = 0;       // seconds from the trace's earliest request
  int session = 0;            // 0 .. RequestTrace::sessions - 1
  int turn = 0;               // 0-based index within the session, in arrival order
  int64_t input_tokens = 0;   // prompt length, >= 1
  int64_t hit_tokens = 0;     // 0 .. input_tokens: prompt tokens whose KV is already persisted
  int64_t output_tokens = 0;  // generated tokens, >= 1
  int64_t line = 0;           // its line in the file (1-based), for messages
};

struct RequestTrace {
  std::string source;  // the file (or name) the trace was read from
  // Sorted by arrival_s; ties keep the order of the lines in the file.
  std::vector<TraceRequest> requests;
  int sessions = 0;             // distinct session ids
  int multi_turn_sessions = 0;  // sessions with at least two requests
};

// Reads `path` with the reader of `format` ("mooncake", "azure" or "alibaba", as workload.trace_format
// spells them; default options). An unknown format is an error naming it.
StatusOr<RequestTrace> read_request_trace(const std::string& format, const std::string& path);

// Sum of hit_tokens / sum of input_tokens over all requests (0 when there is no request).
double token_weighted_hit(const RequestTrace& t);

// ---- Helpers for line-based trace readers ----

// 0-based offset of the first byte of `s` that is not valid UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF), or std::string::npos when `s` is valid.
size_t first_invalid_utf8(std::string_view s);

// Splits a text into lines. "\n" ends a line and a "\r" before it is dropped; the newline that ends the
// last line does not start another one, and the last line may also lack it.
class TextLines {
 public:
  explicit TextLines(std::string_view text) : text_(text) {}
  // Sets `line` to the next line and returns true, or returns false at the end.
  bool next(std::string_view* line);
  // 1-based number of the line last returned by next().
  size_t line_no() const { return line_no_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_no_ = 0;
};

// Error for a line that is not valid UTF-8 or is blank (only spaces and tabs), naming `where`
// ("FILE:LINE"); OK otherwise. `unit` names what one line holds, e.g. "request".
Status check_trace_line(std::string_view line, const std::string& where, const char* unit);

// Parses one line of a JSONL trace into `out` (never throws). Errors name `where` ("FILE:LINE"), with the
// byte of a syntax error: "x.jsonl:3:17: malformed JSON (a truncated line?): syntax error ...", or say
// which number is beyond the range of a double.
Status parse_json_line(std::string_view line, const std::string& where, nlohmann::json* out);

// A JSON value for an error message, cut to 60 characters.
std::string show_json(const nlohmann::json& v);

// A request's hash_ids (`ids`, an array) as block ids: exactly ceil(input / block_tokens) integers >= 0.
// Errors name `where` ("FILE:LINE") and the first bad entry.
Status read_block_ids(const nlohmann::json& ids, int64_t input, int64_t block_tokens,
                      const std::string& where, std::vector<int64_t>* out);

}  // namespace sim::workload
