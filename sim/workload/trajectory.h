// Agent trajectories: the workload as plain data (never a SimGrid actor each).
// A trajectory is a list of turns (rounds). In round i the prompt is the whole earlier context (hit
// tokens, read from storage) plus `append` new tokens (miss tokens, computed); then `gen` tokens are
// generated (DualPath §A.3: Context_{i+1} = concat(A_1, G_1, ..., A_i, G_i)).
//
// Native format (traces/README.md): JSONL, one trajectory per line, UTF-8,
//   {"id": "t17", "turns": [{"append": 1200, "gen": 150, "think_s": 0.5}, ...]}
// id: a non-empty string, unique in the file. turns: a non-empty array. append, gen: integers in
// [1, 2^31-1] (tokens). think_s: optional number >= 0 (seconds; default 0). Unknown keys are errors.
// Every line holds exactly one trajectory: blank lines are errors (a final newline is not a blank
// line), so are an empty file, a truncated line, bytes that are not UTF-8 and duplicate ids. CRLF
// line ends are accepted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::workload {

inline constexpr int64_t kMaxTurnTokens = 2147483647;  // append and gen are int32

struct Turn {
  int32_t append = 0;  // tokens appended to the context this turn (tool output, user text)
  int32_t gen = 0;     // tokens generated this turn
  double think_s = 0;  // delay before this turn is issued, after the previous one finished
};

struct Trajectory {
  std::string id;
  std::vector<Turn> turns;
};

// Sum of append + gen over all turns (the trajectory's final context length), in tokens.
int64_t total_tokens(const Trajectory& t);

// Reads a native trajectory JSONL file. Errors name the file, the line and the field, e.g.
//   traces/x.jsonl:12: turns[3].append: expected an integer in [1, 2147483647], got -5
StatusOr<std::vector<Trajectory>> read_trajectories(const std::string& path);
// Parses the text of a native file; `name` stands for the file in error messages.
StatusOr<std::vector<Trajectory>> parse_trajectories(const std::string& text, const std::string& name);

// Writes the native format atomically (temp file + rename): compact JSON, think_s only when non-zero.
// Rejects what the reader would reject (no trajectories, empty or duplicate ids, no turns, append or gen
// < 1, negative or non-finite think_s), so that write -> read is a round trip.
Status write_trajectories(const std::string& path, const std::vector<Trajectory>& ts);
// The text write_trajectories writes (REQUIRES: the checks above pass).
std::string format_trajectories(const std::vector<Trajectory>& ts);

}  // namespace sim::workload
