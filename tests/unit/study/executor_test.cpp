// The child-run executor of the studies (sim/study/executor.h): the resume rule, with and without a run
// record, the job-array export, and running children at most `jobs` at a time with their exit codes.
#include "sim/study/executor.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using sim::study::ChildJob;
using sim::study::Console;
using sim::study::Executor;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A console that keeps what the executor says.
struct Kept {
  std::string out, err;
  Console console() {
    return {[this](const std::string& s) { out += s; }, [this](const std::string& s) { err += s; }};
  }
};

nlohmann::json finished_result() {
  return {{"summary", {{"stopped_by", "all_turns_done"}, {"jct_s", 1.0}}},
          {"resources", nlohmann::json::object()}};
}

}  // namespace

TEST_CASE("Sweep resume: a finished result is kept, missing, broken or signal-cut ones are rerun", "[unit]") {
  const std::string path = "executor_test_result.json";
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  nlohmann::json r = finished_result();
  write(r.dump());
  CHECK(sim::study::result_file_complete(path));
  r["summary"]["stopped_by"] = "time_limit";  // the run's own stop rule: finished
  write(r.dump());
  CHECK(sim::study::result_file_complete(path));
  for (const char* sig : {"SIGINT", "SIGTERM"}) {
    r["summary"]["stopped_by"] = sig;
    write(r.dump());
    CHECK_FALSE(sim::study::result_file_complete(path));
  }
  write(r.dump().substr(0, 40));  // truncated
  CHECK_FALSE(sim::study::result_file_complete(path));
  std::remove(path.c_str());
  CHECK_FALSE(sim::study::result_file_complete(path));
}

TEST_CASE("Executor: children run at most jobs at a time, each reported with its exit code", "[unit]") {
  Kept kept;
  const Executor ex(2, kept.console());
  std::vector<ChildJob> jobs;
  for (const char* code : {"0", "3", "0"})
    jobs.push_back({code, {"/bin/sh", "-c", std::string("exit ") + code}, "", "", ""});
  jobs.push_back({"missing", {"/nonexistent/dpsim"}, "", "", ""});
  const auto ends = ex.run(jobs);
  REQUIRE(ends.size() == 4);
  CHECK(ends[0].code == 0);
  CHECK(ends[1].code == 3);
  CHECK(ends[2].code == 0);
  CHECK(ends[3].code == 127);  // could not exec
  CHECK(kept.err.find("[4/4] ") != std::string::npos);
  CHECK(kept.err.find(" 3 FAILED (exit 3)\n") != std::string::npos);
  CHECK(kept.out.empty());
}

TEST_CASE("Executor: a job with a record is reused only for the same build and command", "[unit]") {
  Kept kept;
  const Executor ex(1, kept.console());
  const std::string result = "executor_test_recorded.json", record = "executor_test_recorded.run";
  std::remove(record.c_str());
  std::ofstream(result) << finished_result().dump();
  ChildJob job{"p", {"/bin/sh", "-c", "exit 0"}, "", result, record};
  CHECK_FALSE(ex.done_before(job));  // no record yet
  ChildJob plain = job;
  plain.record = "";
  CHECK(ex.done_before(plain));  // without a record, a complete result is enough
  ex.run({job}, sim::study::OnEnd());
  int code = -1;
  CHECK(ex.done_before(job, &code));
  CHECK(code == 0);
  ChildJob other = job;
  other.args.back() = "exit 1";  // another command
  CHECK_FALSE(ex.done_before(other));
  std::ofstream(result) << "{";  // the result broken: run again
  CHECK_FALSE(ex.done_before(job));
  std::remove(result.c_str());
  std::remove(record.c_str());
}

TEST_CASE("Executor: emit writes one quoted command line per job", "[unit]") {
  Kept kept;
  const Executor ex(1, kept.console());
  const std::string file = "executor_test_jobs.txt";
  REQUIRE(ex.emit(file, {{"a", {"/bin/dpsim", "run", "x y.json", "--set", "k=v"}, "", "", ""},
                         {"b", {"/bin/dpsim", "run", "it's"}, "", "", ""}})
              .is_ok());
  CHECK(slurp(file) == "/bin/dpsim run 'x y.json' --set k=v\n/bin/dpsim run 'it'\\''s'\n");
  std::remove(file.c_str());
}
