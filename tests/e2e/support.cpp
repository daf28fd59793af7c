#include "tests/e2e/support.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/core/series_bound.h"

namespace e2e {

namespace fs = std::filesystem;

const std::string& dpsim_binary() {
  static const std::string path = [] {
    const char* env = std::getenv("DPSIM_BINARY");
    return std::string(env != nullptr && *env != '\0' ? env : DPSIM_DEFAULT_BINARY);
  }();
  return path;
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Scratch::Scratch() {
  std::string tmpl = (fs::temp_directory_path() / "dpsim-e2e-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) != nullptr) dir = tmpl;
}

Scratch::~Scratch() {
  std::error_code ec;
  if (!dir.empty()) fs::remove_all(dir, ec);
}

namespace {

constexpr double kPeakTolerance = 1e-6;  // a window's bytes may exceed capacity by rounding only
constexpr double kBytesRelTolerance = 1e-6;

bool close_bytes(double a, double b) {
  return std::fabs(a - b) <= kBytesRelTolerance * std::max(std::fabs(a), std::fabs(b)) + 1.0;
}

}  // namespace

std::string case_file(const std::string& name) {
  return (fs::path(DPSIM_SOURCE_DIR) / "tests" / "e2e" / "cases" / name).string();
}

std::string repo_file(const std::string& relative) {
  return (fs::path(DPSIM_SOURCE_DIR) / relative).string();
}

nlohmann::json read_json(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(read_text(path), nullptr, false);
  INFO("file: " << path);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    INFO("file: " << path << ", line " << lines.size() + 1);
    REQUIRE_FALSE(j.is_discarded());
    lines.push_back(std::move(j));
  }
  return lines;
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(std::move(cells));
  }
  return rows;
}

double timeout_scale() {
  const char* env = std::getenv("DPSIM_E2E_TIMEOUT_SCALE");
  return env != nullptr && std::atof(env) > 0 ? std::atof(env) : 1.0;
}

std::string timeout_prefix(double seconds) {
  return "timeout -k 5 " + std::to_string(seconds * timeout_scale()) + " ";
}

Run run_dpsim(const std::string& scenario, const std::vector<std::string>& sets, double timeout_s) {
  Scratch scratch;
  REQUIRE_FALSE(scratch.dir.empty());
  const fs::path out = scratch.dir / "out.json";
  const fs::path err = scratch.dir / "stderr.txt";
  Run run;
  std::string cmd =
      timeout_prefix(timeout_s) + shell_quoted(dpsim_binary()) + " run " + shell_quoted(scenario);
  for (const auto& s : sets) cmd += " --set " + shell_quoted(s);
  cmd += " --out " + shell_quoted(out.string()) + " --quiet";
  run.command = cmd;
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system((cmd + " >/dev/null 2>" + shell_quoted(err.string())).c_str());
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.stderr_text = read_text(err);
  if (fs::exists(out)) {
    run.result = nlohmann::json::parse(read_text(out), nullptr, false);
    if (run.result.is_discarded()) run.result = nullptr;
  }
  return run;
}

nlohmann::json run_ok(const std::string& scenario, const std::vector<std::string>& sets, double timeout_s) {
  const Run run = run_dpsim(scenario, sets, timeout_s);
  INFO("command: " << run.command << "\nexit code " << run.exit_code << " after " << run.wall_s
                   << " s (124 = killed by the timeout: the simulation did not terminate)\nstderr: "
                   << run.stderr_text);
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.result.is_object());
  check_invariants(run.result);
  return run.result;
}

void check_invariants(const nlohmann::json& r) {
  const bool oracle = r.at("scenario").at("policy").at("read_path") == "oracle";
  const auto& s = r.at("summary");
  const auto& inv = r.at("invariants");
  INFO("invariants of scenario " << r.at("scenario").value("name", "?"));

  CHECK(s.at("turns_completed").get<int64_t>() == s.at("turns_total").get<int64_t>());
  CHECK(inv.at("turns_all_completed").get<bool>());
  CHECK(r.at("complete").get<bool>());
  // The DRAM buffer of a node never holds more than its capacity (one request larger than the whole buffer
  // may run alone; the e2e cases have none).
  CHECK(inv.at("dram_buffer_peak_bytes").get<double>() <= inv.at("dram_buffer_bytes").get<double>());

  const double expected = inv.at("hit_bytes_expected").get<double>();
  const double read = inv.at("storage_bytes_read").get<double>();
  const double loaded = inv.at("hit_bytes_loaded_to_pe").get<double>();
  // The workload's hit tokens, less the context that storage had given up (storage.capacity_bytes).
  const double recomputed = s.at("storage").at("recomputed_tokens").get<double>();
  CHECK(expected ==
        Approx((s.at("hit_tokens").get<double>() - recomputed) * s.at("kv_bytes_per_token").get<double>()));
  if (oracle) {
    CHECK(read == 0);
    CHECK(loaded == 0);
  } else {
    INFO("storage_bytes_read " << read << ", hit_bytes_expected " << expected << ", hit_bytes_loaded_to_pe "
                               << loaded);
    CHECK(close_bytes(read, inv.at("storage_bytes_expected").get<double>()));
    CHECK(close_bytes(loaded, expected));
  }

  for (const auto& [resource, entries] : r.at("resources").items()) {
    for (const auto& e : entries) {
      if (!e.contains("peak_utilization")) continue;  // GPUs: busy time, not a link
      INFO(resource << " node " << e.at("node") << " " << e.value("direction", "") << " gpu "
                    << e.value("gpu", -1) << ": peak_utilization " << e.at("peak_utilization"));
      CHECK(e.at("peak_utilization").get<double>() <= 1 + kPeakTolerance);
      CHECK(e.at("utilization").get<double>() <= 1 + kPeakTolerance);
    }
  }

  // One simulated clock: nothing in the results happens after the simulation's end, and every time
  // series has one point per whole interval up to it (dpsim drops the last partial interval).
  const double end = s.at("sim_end_s").get<double>();
  const double eps = 1e-9 * std::max(1.0, end);
  CHECK(end >= 0);
  CHECK(s.at("jct_s").get<double>() <= end + eps);
  CHECK(s.at("stopped_at_s").get<double>() <= end + eps);
  CHECK(s.at("ttft_s").at("max").get<double>() <= end + eps);
  // The interval the series are at: the scenario's, doubled for a long run (sim/core/series_bound.h).
  const double interval = s.at("series_interval_s").get<double>();
  CHECK(interval == sim::core::series_interval(
                        r.at("scenario").at("outputs").at("timeseries_interval_s").get<double>(), end));
  for (const auto& [resource, entries] : r.at("resources").items()) {
    for (const auto& e : entries) {
      INFO(resource << " node " << e.at("node") << " " << e.value("direction", "") << " gpu "
                    << e.value("gpu", -1));
      if (resource == "buffer") {  // bytes held over time, not a busy time: the mean within the peak within
                                   // the capacity
        CHECK(e.at("mean_bytes").get<double>() <= e.at("peak_bytes").get<double>() * (1 + 1e-9));
        CHECK(e.at("peak_bytes").get<double>() <= e.at("capacity_bytes").get<double>() + 1024);
        continue;
      }
      CHECK(e.at("busy_s").get<double>() <= end + eps);
      if (interval > 0 && e.contains("series")) {
        const double whole = std::floor(end / interval + 1e-9);
        CHECK(static_cast<double>(e.at("series").size()) <= whole);
        CHECK(static_cast<double>(e.at("series").size()) >= whole - 1);
      }
    }
  }

  // Byte conservation on every route: each link carried exactly the bytes of the transfers crossing it.
  CHECK(inv.at("link_bytes_conservation_error").get<double>() <= 1e-9);

  // Nothing leaks: after a complete run no request holds DE HBM (or a promise of it) or DRAM buffer space.
  // Relative to one GPU's KV-sized bytes would hide a small leak, so the tolerance is absolute: 1 KiB.
  if (s.at("turns_completed") == s.at("turns_total")) {
    CHECK(std::abs(inv.at("de_hbm_held_at_end_bytes").get<double>()) <= 1024);
    CHECK(std::abs(inv.at("dram_buffer_held_at_end_bytes").get<double>()) <= 1024);
  }

  // With node failures, the reads of the requests they lost (done, or cut by the failure) crossed the SNICs
  // too: they are counted apart (invariants.storage_bytes_lost).
  const double lost = inv.value("storage_bytes_lost", 0.0);
  const double snic_in = link_bytes(r, "snic", "", "in");
  INFO("SNIC in bytes (all nodes) " << snic_in << ", storage_bytes_read " << read << ", storage_bytes_lost "
                                    << lost);
  CHECK(close_bytes(snic_in, read + lost));
  // A node has a storage backend link when its hardware file's storage is slower than its SNIC (with a file
  // per role, maybe on one role's nodes only): there its reads cross the backend and then the SNIC, so each
  // such node's backend read bytes are its SNIC in bytes.
  if (r.at("resources").contains("storage")) {
    std::set<int> backed;
    for (const auto& e : r.at("resources").at("storage")) backed.insert(e.at("node").get<int>());
    for (int n : backed) {
      INFO("node " << n);
      CHECK(close_bytes(node_link_bytes(r, "storage", n, "read"), node_link_bytes(r, "snic", n, "in")));
    }
  }
}

nlohmann::json without_run_info(nlohmann::json result) {
  result.erase("run_info");
  return result;
}

double link_bytes(const nlohmann::json& r, const std::string& resource, const std::string& role,
                  const std::string& direction) {
  double sum = 0;
  if (!r.at("resources").contains(resource)) return 0;
  for (const auto& e : r.at("resources").at(resource)) {
    if (!role.empty() && e.at("role") != role) continue;
    if (!direction.empty() && e.value("direction", "") != direction) continue;
    sum += e.at("bytes").get<double>();
  }
  return sum;
}

double node_link_bytes(const nlohmann::json& r, const std::string& resource, int node,
                       const std::string& direction) {
  double sum = 0;
  if (!r.at("resources").contains(resource)) return 0;
  for (const auto& e : r.at("resources").at(resource)) {
    if (e.at("node").get<int>() != node) continue;
    if (!direction.empty() && e.value("direction", "") != direction) continue;
    sum += e.at("bytes").get<double>();
  }
  return sum;
}

double num(const nlohmann::json& r, const char* key, const char* sub) {
  return sub ? r.at("summary").at(key).at(sub).get<double>() : r.at("summary").at(key).get<double>();
}

double snic(const nlohmann::json& r, int node, const std::string& direction) {
  for (const auto& l : r.at("resources").at("snic"))
    if (l.at("node") == node && l.at("direction") == direction) return l.at("bytes").get<double>();
  FAIL("no snic " << direction << " on node " << node);
  return -1;
}

}  // namespace e2e
