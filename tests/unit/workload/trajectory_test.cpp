#include "sim/workload/trajectory.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

namespace wl = sim::workload;

namespace {

// The error message of parsing `text` as file "x.jsonl" (REQUIRES: it fails).
std::string trajectory_parse_error(const std::string& text) {
  auto r = wl::parse_trajectories(text, "x.jsonl");
  REQUIRE_FALSE(r.is_ok());
  return r.status().message();
}

const char* kGood = "{\"id\":\"a\",\"turns\":[{\"append\":1200,\"gen\":150}]}\n";

std::vector<wl::Trajectory> sample_set() {
  return {
      {"t0", {{9000, 150, 0.0}, {300, 40, 0.0}, {1, 1, 2.5}}},
      {"quote \" and \\ and \xc3\xa9", {{7, 3, 0.0}}},
      {"t2", {{2147483647, 1, 0.125}}},
  };
}

}  // namespace

TEST_CASE("Trajectory: format then parse -> identical trajectories", "[unit]") {
  std::vector<wl::Trajectory> in = sample_set();
  std::string text = wl::format_trajectories(in);
  auto out = wl::parse_trajectories(text, "mem");
  REQUIRE(out.is_ok());
  REQUIRE(out->size() == in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    CHECK((*out)[i].id == in[i].id);
    REQUIRE((*out)[i].turns.size() == in[i].turns.size());
    for (size_t k = 0; k < in[i].turns.size(); ++k) {
      CHECK((*out)[i].turns[k].append == in[i].turns[k].append);
      CHECK((*out)[i].turns[k].gen == in[i].turns[k].gen);
      CHECK((*out)[i].turns[k].think_s == in[i].turns[k].think_s);
    }
  }
  // Compact: think_s appears only where it is non-zero.
  CHECK(text.find("{\"id\":\"t0\",\"turns\":[{\"append\":9000,\"gen\":150},") == 0);
  CHECK(text.find("\"think_s\":2.5") != std::string::npos);
  CHECK(text.find("\"think_s\":0}") == std::string::npos);
  CHECK(text.find("\"think_s\":0.125}") != std::string::npos);
}

TEST_CASE("Trajectory: write_trajectories then read_trajectories -> round trip through a file", "[unit]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("dpsim-traj-test-" + std::to_string(::getpid()));
  std::string path = (dir / "sub" / "t.jsonl").string();
  std::vector<wl::Trajectory> in = sample_set();
  REQUIRE(wl::write_trajectories(path, in).is_ok());
  auto out = wl::read_trajectories(path);
  REQUIRE(out.is_ok());
  CHECK(wl::format_trajectories(*out) == wl::format_trajectories(in));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("Trajectory: bad field -> error names file, line and field", "[unit]") {
  std::string text =
      std::string(kGood) + "{\"id\":\"b\",\"turns\":[{\"append\":1,\"gen\":1},{\"append\":-5,\"gen\":1}]}\n";
  CHECK(trajectory_parse_error(text) ==
        "x.jsonl:2: turns[1].append: expected an integer in [1, 2147483647], got -5");
  CHECK(
      trajectory_parse_error("{\"id\":\"a\",\"turns\":[{\"append\":1}]}") ==
      "x.jsonl:1: turns[0].gen: expected an integer in [1, 2147483647], got nothing (the field is missing)");
  CHECK(trajectory_parse_error("{\"id\":\"a\",\"turns\":[{\"append\":1.5,\"gen\":1}]}")
            .find("x.jsonl:1: turns[0].append") == 0);
  CHECK(trajectory_parse_error("{\"id\":\"a\",\"turns\":[{\"append\":1,\"gen\":0}]}")
            .find("x.jsonl:1: turns[0].gen") == 0);
  CHECK(trajectory_parse_error("{\"id\":\"a\",\"turns\":[{\"append\":1,\"gen\":1,\"think_s\":-1}]}")
            .find("x.jsonl:1: turns[0].think_s: expected a number >= 0") == 0);
  CHECK(trajectory_parse_error("{\"id\":\"a\",\"turns\":[{\"append\":1,\"gen\":1,\"tool\":3}]}")
            .find("x.jsonl:1: turns[0].tool: unknown key") == 0);
  CHECK(trajectory_parse_error("{\"id\":\"a\",\"turns\":[],\"x\":1}")
            .find("x.jsonl:1: turns: expected a non-empty array") == 0);
  CHECK(trajectory_parse_error("{\"id\":\"\",\"turns\":[{\"append\":1,\"gen\":1}]}")
            .find("x.jsonl:1: id: expected a non-empty") == 0);
  CHECK(trajectory_parse_error("{\"id\":7,\"turns\":[{\"append\":1,\"gen\":1}]}")
            .find("x.jsonl:1: id: expected a string") == 0);
  CHECK(trajectory_parse_error("{\"id\":\"a\",\"turns\":[5]}")
            .find("x.jsonl:1: turns[0]: expected an object") == 0);
  CHECK(trajectory_parse_error("[1,2]").find("x.jsonl:1: expected a JSON object") == 0);
  CHECK(trajectory_parse_error(std::string(kGood) +
                               "{\"id\":\"a\",\"turns\":[{\"append\":1,\"gen\":1}],\"extra\":1}\n")
            .find("x.jsonl:2: extra: unknown key") == 0);
}

TEST_CASE("Trajectory: empty, blank, truncated, non-UTF-8 and duplicate -> errors with line numbers",
          "[unit]") {
  CHECK(trajectory_parse_error("") == "x.jsonl: empty file: expected one trajectory per line");
  CHECK(trajectory_parse_error("\n") ==
        "x.jsonl:1: blank line (the format holds exactly one trajectory per line)");
  CHECK(trajectory_parse_error(std::string(kGood) + "  \n" + kGood).find("x.jsonl:2: blank line") == 0);
  std::string truncated = std::string(kGood) + "{\"id\":\"b\",\"turns\":[{\"append\":1,\"gen\":1}]}\n" +
                          "{\"id\":\"c\",\"turns\":[{\"append\":1,";
  std::string msg = trajectory_parse_error(truncated);
  CHECK(msg.find("x.jsonl:3:32: malformed JSON") == 0);
  CHECK(msg.find("malformed JSON") != std::string::npos);
  CHECK(trajectory_parse_error(std::string(kGood) +
                               "{\"id\":\"b\xff\",\"turns\":[{\"append\":1,\"gen\":1}]}\n") ==
        "x.jsonl:2: invalid UTF-8 (byte 0xff at column 9)");
  CHECK(trajectory_parse_error("{\"id\":\"\xc0\xaf\",\"turns\":[{\"append\":1,\"gen\":1}]}")
            .find("x.jsonl:1: invalid UTF-8") == 0);  // overlong encoding
  std::string dup = std::string(kGood) + "{\"id\":\"b\",\"turns\":[{\"append\":1,\"gen\":1}]}\n" + kGood;
  CHECK(trajectory_parse_error(dup) == "x.jsonl:3: id: duplicate \"a\" (first on line 1)");
}

TEST_CASE("Trajectory: final newline optional, CRLF accepted -> parses", "[unit]") {
  std::string no_newline(kGood);
  no_newline.pop_back();
  CHECK(wl::parse_trajectories(no_newline, "x").is_ok());
  std::string crlf =
      "{\"id\":\"a\",\"turns\":[{\"append\":1,\"gen\":2}]}\r\n{\"id\":\"b\",\"turns\":[{\"append\":3,\"gen\":"
      "4}]}\r\n";
  auto r = wl::parse_trajectories(crlf, "x");
  REQUIRE(r.is_ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[1].turns[0].gen == 4);
  CHECK(wl::total_tokens((*r)[1]) == 7);
}

TEST_CASE("Trajectory: missing file or directory -> error names the path", "[unit]") {
  auto r = wl::read_trajectories("/nonexistent/dir/t.jsonl");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message() == "/nonexistent/dir/t.jsonl: cannot open: no such file");
  auto d = wl::read_trajectories(std::filesystem::temp_directory_path().string());
  REQUIRE_FALSE(d.is_ok());
  CHECK(d.status().message().find("got a directory") != std::string::npos);
}

TEST_CASE("Trajectory: writing what the reader rejects -> error, nothing written", "[unit]") {
  std::string path = (std::filesystem::temp_directory_path() / "dpsim-never-written.jsonl").string();
  CHECK_FALSE(wl::write_trajectories(path, {}).is_ok());
  std::vector<wl::Trajectory> dup = {{"a", {{1, 1, 0.0}}}, {"a", {{1, 1, 0.0}}}};
  auto s = wl::write_trajectories(path, dup);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("trajectories[1].id: duplicate \"a\"") != std::string::npos);
  CHECK_FALSE(wl::write_trajectories(path, {{"a", {}}}).is_ok());
  CHECK_FALSE(wl::write_trajectories(path, {{"a", {{0, 1, 0.0}}}}).is_ok());
  CHECK_FALSE(wl::write_trajectories(path, {{"a", {{1, 1, -1.0}}}}).is_ok());
  CHECK_FALSE(wl::write_trajectories(path, {{"", {{1, 1, 0.0}}}}).is_ok());
  CHECK_FALSE(std::filesystem::exists(path));
}
