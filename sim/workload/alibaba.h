// Reader for Alibaba's agentic request traces (alibaba-edu/qwen-bailian-usagetraces-anon on GitHub,
// Apache 2.0: KVCache traces of a Qwen serving instance on Aliyun Bailian; format and rules in
// traces/README.md, "Alibaba JSONL"). The published files are not in the repository; a synthetic
// sample in the same format is (traces/synthetic/alibaba-sample.jsonl).
//
// Format: JSONL, one request per line, UTF-8, each line an object with the keys
//   {"chat_id": 159, "parent_chat_id": 55, "timestamp": 61.114, "input_length": 521,
//    "output_length": 132, "type": "text", "turn": 2, "hash_ids": [1089, 1090, ...]}
// chat_id: integer >= 0, unique in the file. parent_chat_id: the chat_id of the request this one
// continues, on an earlier line; -1, null or no key for a session's first request. timestamp: number
// >= 0, seconds from the trace's start, not below the parent's. input_length, output_length: integers
// in [1, 2^31-1], tokens. hash_ids: one integer >= 0 per 16-token block of the prompt,
// ceil(input_length / 16) of them (the last block may be partial). type (string) and turn (integer
// >= 0) may be missing and are not used: the reader numbers turns itself. Any other key, blank lines,
// an empty file, a truncated line and bytes that are not UTF-8 are errors; every error names the file
// and the line, and the field when there is one:
//   traces/x.jsonl:7: parent_chat_id: 12 is not the chat_id of an earlier line
//
// What the reader derives:
// - Sessions: a request belongs to the session of its parent; following parent_chat_id leads to the
//   session's first request. Session ids in order of first arrival; turn = index in the session in
//   arrival order (a session whose requests branch is replayed as one sequence).
// - Arrivals: arrival_s = timestamp - the earliest timestamp; requests sorted by it, ties in line order.
// - Hit tokens (a cache per session that keeps every prompt block the session has sent): the longest
//   prefix of the request's hash_ids that is a prefix of the hash_ids of an earlier request of its
//   session (in arrival order), in tokens: blocks x 16, capped at input_length. Generated tokens have
//   no ids in the trace and never count; nothing is shared across sessions. A session's first request
//   hits 0.
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/status.h"
#include "sim/workload/request_trace.h"

namespace sim::workload {

inline constexpr int64_t kAlibabaBlockTokens = 16;

// Reads an Alibaba JSONL file.
StatusOr<RequestTrace> read_alibaba(const std::string& path);
// Parses the text of such a file; `name` stands for the file in messages and in `source`.
StatusOr<RequestTrace> parse_alibaba(const std::string& text, const std::string& name);

}  // namespace sim::workload
