// Reader for the Azure LLM inference traces of 2023 (Azure/AzurePublicDataset, collected for
// Splitwise, ISCA'24; copies in traces/public/, format in traces/README.md, "Azure LLM inference CSV").
//
// Format: CSV, UTF-8, "\n" or "\r\n" line ends. The first line is exactly
//   TIMESTAMP,ContextTokens,GeneratedTokens
// then one request per line, e.g.
//   2023-11-16 18:17:03.9799600,4808,10
// TIMESTAMP: "YYYY-MM-DD HH:MM:SS" (year 0001..9999) with an optional fraction of 1 to 9 digits; a
// calendar date and time of day (only differences are used, so the time zone does not matter).
// ContextTokens (prompt) and GeneratedTokens (output): decimal integers in [1, 2^31-1], digits only.
// No other columns, no quoting, no blank lines; an empty file or a header without rows is an error.
// Every error names the file and the line, and the column when there is one:
//   traces/x.csv:7: ContextTokens: expected an integer in [1, 2147483647], got "0"
//
// What the reader derives: every request is single-turn, its own session (turn 0) with hit 0 (the trace
// has no prefix information). arrival_s = seconds from the earliest timestamp (the first row in a
// time-ordered file such as the public ones); requests are sorted by it, ties in line order.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "sim/workload/request_trace.h"

namespace sim::workload {

// Reads an Azure LLM inference CSV file.
StatusOr<RequestTrace> read_azure(const std::string& path);
// Parses the text of such a file; `name` stands for the file in messages and in `source`.
StatusOr<RequestTrace> parse_azure(const std::string& text, const std::string& name);

}  // namespace sim::workload
