// What every study (a command that runs many simulations: sweep, plan, props, ...) shares with the command
// that calls it: where its lines go while it runs, and what it ends with. A study prints nothing itself;
// sim/cli/ prints what it returns and turns its verdict into the exit code.
#pragma once

#include <functional>
#include <string>

namespace sim::study {

// Where a study's lines go as it runs. Each call passes one or more whole lines, each ending in '\n'.
struct Console {
  std::function<void(const std::string&)> out;  // report lines printed as they are measured (stdout)
  std::function<void(const std::string&)> err;  // progress, warnings and failures (stderr)
};

// How a study ended: it holds (exit code 0), it does not (1: a check broke, a goal was not met, a point
// failed), or a run was given bad input (2).
enum class Verdict { kPass, kFail, kBadInput };

// What a study that ran returns: its report, printed on stdout after any lines of Console::out, and its
// verdict. A study that cannot start (a bad scenario, option or file) returns a Status instead, whose
// message the command prints as "dpsim: <message>" with exit code 2.
struct Outcome {
  std::string text;
  Verdict verdict = Verdict::kPass;
};

}  // namespace sim::study
