// Agent trajectories: the workload as plain data (never a SimGrid actor each).
// A trajectory is a list of turns (rounds). In round i the prompt is the whole earlier context (hit
// tokens, read from storage) plus `append` new tokens (miss tokens, computed); then `gen` tokens are
// generated. Native format: traces/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace sim::workload {

struct Turn {
  int32_t append = 0;    // tokens appended to the context this turn (tool output, user text)
  int32_t gen = 0;       // tokens generated this turn
  double think_s = 0;    // delay before this turn is issued, after the previous one finished
};

struct Trajectory {
  std::string id;
  std::vector<Turn> turns;
};

// Reads a native trajectory JSONL file. Errors name the file and the line.
StatusOr<std::vector<Trajectory>> read_trajectories(const std::string& path);
// Writes the native format atomically (temp file + rename).
Status write_trajectories(const std::string& path, const std::vector<Trajectory>& ts);

}  // namespace sim::workload
