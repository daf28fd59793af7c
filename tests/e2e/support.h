// End-to-end test support: run the real `dpsim run` binary as a subprocess on a scenario, parse its
// results JSON, and check the run invariants every e2e run must satisfy (DESIGN.md, "Validation").
// Uses Catch2 assertions, so it may only be called from inside a TEST_CASE.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace e2e {

// "timeout -k 5 <s> ": the prefix that kills a command after `seconds` wall seconds times
// DPSIM_E2E_TIMEOUT_SCALE (default 1; `make test-sanitize` sets 10, its builds run that much slower), so
// that a simulator that never terminates fails its test instead of hanging ctest.
std::string timeout_prefix(double seconds);
// That scale (1 unless DPSIM_E2E_TIMEOUT_SCALE says otherwise), for wall-time bounds of a test's own.
double timeout_scale();

// The dpsim binary the tests run: $DPSIM_BINARY when set (CMakeLists.txt's file-by-file check runs this
// suite against its own build of dpsim), else the one built beside this test binary.
const std::string& dpsim_binary();

// Single-quotes `s` for /bin/sh.
std::string shell_quoted(const std::string& s);

// Runs a shell command; its exit code (128 when it did not exit normally).
int shell(const std::string& command);
// The whole content of a file ("" when unreadable).
std::string read_text(const std::filesystem::path& p);

// A command's exit code and the text it wrote (where the caller redirected its stdout and stderr).
struct Output {
  int code;
  std::string text;
};

// A fresh scratch directory, removed at destruction (dir is empty when it could not be made).
struct Scratch {
  std::filesystem::path dir;
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// Absolute path of `name` under tests/e2e/cases/ and under the repository root.
std::string case_file(const std::string& name);
std::string repo_file(const std::string& relative);

// Reads a JSON file (REQUIREs that it parses) or a JSONL file (one JSON value per non-empty line).
nlohmann::json read_json(const std::string& path);
std::vector<nlohmann::json> read_jsonl(const std::string& path);
// The lines of a CSV file (no quoting), each split on commas; an empty last cell is kept.
std::vector<std::vector<std::string>> read_csv(const std::string& path);

struct Run {
  std::string command;      // the shell command, for messages
  int exit_code = -1;       // dpsim's exit status; 124 = killed by the timeout (a hang)
  double wall_s = 0;        // wall-clock seconds of the subprocess
  std::string stderr_text;  // what dpsim wrote on stderr
  nlohmann::json result;    // the parsed results JSON (null when dpsim wrote none)
};

// Runs `dpsim run <scenario> --set s... --out <fresh temp dir>/out.json --quiet`; the temporary directory
// is removed before returning. `sets` are "key.path=value" overrides. A run is killed after timeout_s
// wall seconds (so a simulator that never terminates fails the test instead of hanging ctest).
Run run_dpsim(const std::string& scenario, const std::vector<std::string>& sets, double timeout_s = 30);

// run_dpsim() + REQUIRE exit code 0 and a results JSON + check_invariants(). Returns the results JSON.
nlohmann::json run_ok(const std::string& scenario, const std::vector<std::string>& sets = {},
                      double timeout_s = 30);

// Checks (Catch CHECKs, each naming the quantity) the invariants of one results JSON:
// - every turn completes: summary.turns_completed == summary.turns_total, invariants.turns_all_completed;
// - storage bytes read == hit bytes expected (sum of hit tokens x KV bytes per token), or 0 for oracle;
// - hit bytes loaded to the PE GPUs == hit bytes expected (0 for oracle): every byte read from storage
//   reaches the PE GPU that computes with it;
// - no accounted link's peak utilisation (any window) exceeds 1 + 1e-6;
// - byte conservation: every link's bytes = the sizes of the transfers whose route crosses it (1e-9);
// - nothing leaks: a complete run ends with no DE HBM held or promised and no DRAM buffer space held;
// - one simulated clock: JCT, stop time, max TTFT and every busy time <= sim_end_s, and each time series
//   has one point per whole series interval up to sim_end_s;
// - bytes on the SNICs' "in" direction summed over nodes == storage bytes read (plus, with node failures,
//   invariants.storage_bytes_lost: what lost requests read), and the same for the storage backend's "read"
//   direction when the hardware models one.
void check_invariants(const nlohmann::json& result);

// The results JSON without its wall-clock part (run_info), for comparisons between runs.
nlohmann::json without_run_info(nlohmann::json result);

// Sum of `bytes` over resources.<resource>[] entries whose role and direction match ("" = any).
double link_bytes(const nlohmann::json& result, const std::string& resource, const std::string& role,
                  const std::string& direction);

// Same, for one node.
double node_link_bytes(const nlohmann::json& result, const std::string& resource, int node,
                       const std::string& direction);

// summary.<key> of a results JSON as a number, or summary.<key>.<sub> when `sub` is given.
double num(const nlohmann::json& result, const char* key, const char* sub = nullptr);

// Bytes through node `node`'s SNIC in `direction` (FAILs the test when the results JSON lists no such SNIC).
double snic(const nlohmann::json& result, int node, const std::string& direction);

}  // namespace e2e
