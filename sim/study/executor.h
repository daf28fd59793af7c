// Child `dpsim` processes for the commands that run many simulations (sweep, check): SimGrid runs one
// simulation per process, so each run is a fork/exec of this executable.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sim::study {

// Absolute path of the running executable ("dpsim" when /proc/self/exe is unreadable).
std::string self_exe();

// `s` single-quoted for /bin/sh.
std::string shell_quote(const std::string& s);

// The overrides every child `dpsim run` of a many-run command gets last: no timeline and no per-turn records
// (outputs.timeline and outputs.requests name one file each, which the runs would overwrite in turn; run the
// point of interest alone to get them).
inline constexpr const char* kNoTimeline = "outputs.timeline=";
inline constexpr const char* kNoRequests = "outputs.requests=";

// A child's JSON output (a result, a manifest); discarded when unreadable or not JSON.
nlohmann::json read_json_file(const std::string& path);

// One command line for a shell (each argument quoted when needed).
std::string shell_line(const std::vector<std::string>& args);

// Child runs at a time: `requested` when > 0, else the number of cores (at least 1).
int default_jobs(int requested);

// For run_children's on_done: one line per finished child on stderr, "[k/n] <name> done" or
// "[k/n] <name> FAILED (exit c)". ctx is a ChildProgress whose names are the jobs' names, in job order.
struct ChildProgress {
  std::vector<std::string> names;
  size_t done = 0;
};
void print_child_progress(size_t index, int code, void* ctx);

struct ChildJob {
  std::vector<std::string> args;  // argv; args[0] is the executable path
  std::string log;                // stdout and stderr go here ("" = inherited)
};

// Runs the jobs, at most `jobs` at a time (jobs >= 1), and returns each one's exit code (127 when it
// could not be started, 128 + signal when killed). `on_done(i, code)` is called as each job finishes.
std::vector<int> run_children(const std::vector<ChildJob>& list, int jobs,
                              void (*on_done)(size_t index, int code, void* ctx) = nullptr,
                              void* ctx = nullptr);

}  // namespace sim::study
