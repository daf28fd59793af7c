// Reader for Mooncake's public request traces (kvcache-ai/Mooncake, FAST'25 release; copies in
// traces/public/, format and rules in traces/README.md, "Mooncake JSONL").
//
// Format: JSONL, one request per line, UTF-8, each line exactly the object
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
// timestamp: integer >= 0, milliseconds. input_length, output_length: integers in [1, 2^31-1], tokens.
// hash_ids: one integer >= 0 per 512-token block of the prompt, ceil(input_length / 512) of them (the
// last block may be partial). An id names a block together with everything before it, so an id always
// follows the same id (or always comes first): the reader checks this ("prefix consistency").
// Unknown keys, blank lines, an empty file, a truncated line and bytes that are not UTF-8 are errors;
// every error names the file and the line, and the field when there is one:
//   traces/x.jsonl:12: hash_ids: expected 14 block ids (ceil(6758 / 512)), got 13
//
// What the reader derives (processing requests in arrival order, ties in line order):
// - Hit tokens, with an infinite cache: every block of every earlier request is persisted (prompt
//   blocks, the partial last block included; generated tokens are not in the trace). A request's hit
//   is the longest prefix of its blocks that is persisted, in tokens: blocks x 512, capped at
//   input_length (so a request may hit its whole prompt).
// - Sessions by hash-prefix chains: the full blocks of a request are its first floor(input/512) ids.
//   Request p is an eligible parent when it has at least one full block and its last full block is
//   not shared: a block is shared when at least `shared_fanout` distinct full blocks follow it
//   anywhere in the trace (a system prompt is followed by thousands of conversations; a turn of one
//   conversation by one next turn, a few when a user retries). A request continues the latest
//   earlier eligible parent whose full blocks are a prefix of its own hash_ids; with none it starts
//   a new session.
// - Arrivals: arrival_s = (timestamp - earliest timestamp) / 1000. With spread_buckets, the n requests
//   sharing a timestamp t are spread evenly over the gap to the next distinct timestamp t':
//   the i-th (0-based, line order) arrives at t + i (t' - t) / n; the last timestamp's gap is the
//   mean gap between consecutive distinct timestamps (none when all requests share one timestamp).
#pragma once

#include <cstdint>
#include <string>

#include "sim/core/status.h"
#include "sim/workload/request_trace.h"

namespace sim::workload {

inline constexpr int64_t kMooncakeBlockTokens = 512;
// A block followed by at least this many distinct full blocks is shared and does not chain sessions.
// dpsim's choice: on the conversation trace every value from 8 to 6,047 rebuilds the same sessions
// (the system prompt block has 6,047 successors, no other block more than 7).
inline constexpr int kDefaultSharedFanout = 16;

struct MooncakeOptions {
  int shared_fanout = kDefaultSharedFanout;  // >= 2
  bool spread_buckets = true;                // spread requests that share a timestamp
};

// Reads a Mooncake JSONL file.
StatusOr<RequestTrace> read_mooncake(const std::string& path, const MooncakeOptions& options = {});
// Parses the text of a Mooncake JSONL file; `name` stands for the file in messages and in `source`.
StatusOr<RequestTrace> parse_mooncake(const std::string& text, const std::string& name,
                                      const MooncakeOptions& options = {});

}  // namespace sim::workload
