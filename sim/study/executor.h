// The child-run executor of the studies. SimGrid runs one simulation per process, so each run of a study is
// a child `dpsim` process (fork/exec of this executable). This is the one place for the rules the studies
// share about their children:
//   parallel  at most jobs() children at a time;
//   resume    a job whose results JSON is already complete is not run again (done_before);
//   export    the jobs' command lines, one per line, for a cluster's job array (emit);
//   progress  one line per finished child on Console::err, "[k/n] <name> done" (run).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/study/study.h"

namespace sim::study {

// Absolute path of the running executable ("dpsim" when /proc/self/exe is unreadable).
std::string self_exe();

// `s` single-quoted for /bin/sh.
std::string shell_quote(const std::string& s);

// One command line for a shell (each argument quoted when needed).
std::string shell_line(const std::vector<std::string>& args);

// The overrides every child `dpsim run` of a study gets last: no timeline and no per-turn records
// (outputs.timeline and outputs.requests name one file each, which the runs would overwrite in turn; run the
// point of interest alone to get them).
inline constexpr const char* kNoTimeline = "outputs.timeline=";
inline constexpr const char* kNoRequests = "outputs.requests=";

// A child's JSON output (a result, a manifest); discarded when unreadable or not JSON.
nlohmann::json read_json_file(const std::string& path);

// Child runs at a time: `requested` when > 0, else the number of cores (at least 1).
int default_jobs(int requested);

// Whether `path` holds a finished results JSON: it parses, has "summary" and "resources", and the run was
// not cut short by a signal (summary.stopped_by "SIGINT" | "SIGTERM": such a point is run again). A run
// ended by its own stop rule (time limit, SLO, steady state) is finished.
bool result_file_complete(const std::string& path);

struct ChildJob {
  std::string name;               // in progress and failure lines
  std::vector<std::string> args;  // argv; args[0] is the executable path
  std::string log;                // stdout and stderr go here ("" = inherited)
  std::string result;             // the results JSON the child writes ("" = none: never reused)
  // "" = none. Else the file where the run is recorded when it ends (its exit code, the build of args[0],
  // its command line), and the job is reused only when the record names the same build and command.
  std::string record;
};

struct ChildEnd {
  int code = 127;            // exit code; 127 when it could not be started, 128 + signal when killed
  int status = -1;           // the raw wait status (-1 when it could not be started)
  double cpu_s = 0;          // user + system CPU seconds
  double max_rss_bytes = 0;  // peak resident memory
};

// Called as each child ends, with its index in the list run.
using OnEnd = std::function<void(size_t index, const ChildEnd& end)>;

class Executor {
 public:
  // jobs <= 0: the number of cores. Progress goes to console.err.
  Executor(int jobs, Console console);

  int jobs() const { return jobs_; }

  // As std::system does: while children run, this process ignores SIGINT and SIGQUIT (its children do
  // not), so an interrupt stops the children, which keep partial results, and the study reports them.
  void shield_interrupts() { shield_ = true; }

  // Resume: whether `job` finished in an earlier invocation: its result is complete (result_file_complete)
  // and, when it keeps a record, the record names this build and this command. *code (when given) gets the
  // recorded exit code (0 without a record).
  bool done_before(const ChildJob& job, int* code = nullptr) const;

  // Export: one shell line per job (shell_line of its args), written atomically to `file`.
  Status emit(const std::string& file, const std::vector<ChildJob>& jobs) const;

  // Runs the jobs, at most jobs() at a time, and returns how each ended, in list order. As each ends its
  // record is written (when it keeps one) and `on_end` is called; the default prints "[k/n] <name> done"
  // or "[k/n] <name> FAILED (exit c)" on Console::err.
  std::vector<ChildEnd> run(const std::vector<ChildJob>& list) const;
  std::vector<ChildEnd> run(const std::vector<ChildJob>& list, const OnEnd& on_end) const;

  // "point <name> failed (exit <code>); its log: <log>": how a study names a point that left no result.
  static std::string failure(const ChildJob& job, int code);

 private:
  int jobs_;
  Console console_;
  bool shield_ = false;
};

}  // namespace sim::study
