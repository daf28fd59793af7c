// End-to-end checks of outputs.requests (sim/metrics/request_log.h): the per-turn records of a run,
// checked against what the run measured by other paths: the summary's token counters, the storage bytes
// the readers counted, and the bytes the link metering saw on each node's SNIC.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

const std::string kRequestsOnline = e2e::case_file("online_1p1d.json");

const std::vector<std::string> kColumns = {"agent",
                                           "turn",
                                           "issue_s",
                                           "read_start_s",
                                           "read_end_s",
                                           "kv_ready_s",
                                           "prefill_start_s",
                                           "first_token_s",
                                           "second_token_s",
                                           "done_s",
                                           "ttft_s",
                                           "tpot_s",
                                           "hit_tokens",
                                           "miss_tokens",
                                           "gen_tokens",
                                           "read_path",
                                           "pe",
                                           "pe_node",
                                           "de",
                                           "de_node",
                                           "pe_read_bytes",
                                           "de_read_bytes"};

using Row = std::map<std::string, std::string>;

// The rows of a records CSV, REQUIRing its header to be kColumns.
std::vector<Row> read_csv(const std::string& path) {
  auto lines = e2e::read_csv(path);
  REQUIRE(!lines.empty());
  REQUIRE(lines.front() == kColumns);
  std::vector<Row> rows;
  for (size_t l = 1; l < lines.size(); ++l) {
    REQUIRE(lines[l].size() == kColumns.size());
    Row r;
    for (size_t i = 0; i < kColumns.size(); ++i) r[kColumns[i]] = lines[l][i];
    rows.push_back(r);
  }
  return rows;
}

// A time of a row, -1 when empty (not reached).
double t(const Row& r, const std::string& k) {
  return r.at(k).empty() ? -1.0 : std::stod(r.at(k));
}

}  // namespace

TEST_CASE("Requests: CSV -> one row per turn, milestones in order, tokens and bytes as the run counted them",
          "[e2e]") {
  e2e::Scratch scratch;
  const std::string path = (scratch.dir / "turns.csv").string();
  const auto res = e2e::run_ok(kRequestsOnline, {"workload.aps=1", "outputs.requests=" + path});
  const auto& s = res.at("summary");
  const auto rows = read_csv(path);
  REQUIRE(static_cast<int64_t>(rows.size()) == s.at("turns_completed").get<int64_t>());
  CHECK(res.at("requests").at("path") == path);
  CHECK(res.at("requests").at("records").get<size_t>() == rows.size());

  std::set<std::pair<int, int>> seen;
  std::map<int, int> turns_of;  // agent -> turns recorded
  double hit = 0, miss = 0, gen = 0, pe_bytes = 0, de_bytes = 0, ttft_sum = 0;
  std::map<int, double> node_bytes;  // storage bytes through each node's SNIC, by the records
  std::map<std::string, int> paths;
  const double kv = s.at("kv_bytes_per_token").get<double>();
  for (const auto& r : rows) {
    const int agent = std::stoi(r.at("agent")), turn = std::stoi(r.at("turn"));
    CHECK(seen.insert({agent, turn}).second);  // every turn once
    turns_of[agent]++;
    const double h = std::stod(r.at("hit_tokens")), pb = std::stod(r.at("pe_read_bytes")),
                 db = std::stod(r.at("de_read_bytes"));
    hit += h;
    miss += std::stod(r.at("miss_tokens"));
    gen += std::stod(r.at("gen_tokens"));
    pe_bytes += pb;
    de_bytes += db;
    node_bytes[std::stoi(r.at("pe_node"))] += pb;
    node_bytes[std::stoi(r.at("de_node"))] += db;
    ttft_sum += std::stod(r.at("ttft_s"));
    const std::string& p = r.at("read_path");
    paths[p]++;
    // The read path says which sides read, and the bytes are the hit's KV.
    CHECK(pb + db == Approx(h * kv).epsilon(1e-12));
    if (p == "none") {
      CHECK(h == 0);
      CHECK(r.at("read_start_s").empty());
      CHECK(r.at("read_end_s").empty());
    } else {
      CHECK(h > 0);
      CHECK(((p == "pe" && db == 0 && pb > 0) || (p == "de" && pb == 0 && db > 0) ||
             (p == "split" && pb > 0 && db > 0)));
    }
    // Milestones in the order a turn goes through them.
    std::vector<double> order = {t(r, "issue_s"),        t(r, "read_start_s"),    t(r, "read_end_s"),
                                 t(r, "kv_ready_s"),     t(r, "prefill_start_s"), t(r, "first_token_s"),
                                 t(r, "second_token_s"), t(r, "done_s")};
    double last = 0;
    for (double x : order) {
      if (x < 0) continue;
      CHECK(x >= last);
      last = x;
    }
    CHECK(t(r, "ttft_s") == Approx(t(r, "first_token_s") - t(r, "issue_s")).margin(1e-9));
    CHECK(r.at("second_token_s").empty() == (std::stod(r.at("gen_tokens")) == 1));
  }
  // Every agent that arrived ran all its turns 0 .. n-1 (max_turns 4).
  for (const auto& [agent, n] : turns_of) CHECK(n == 4);
  CHECK(static_cast<int>(turns_of.size()) == s.at("agents").get<int>());
  CHECK(paths.size() >= 3);  // first turns read nothing; dualpath reads on both sides
  // The summary's counters.
  CHECK(hit == s.at("hit_tokens").get<double>());
  CHECK(miss == s.at("miss_tokens").get<double>());
  CHECK(gen == s.at("gen_tokens").get<double>());
  CHECK(pe_bytes + de_bytes == Approx(s.at("storage_read_bytes").get<double>()).epsilon(1e-12));
  CHECK(ttft_sum / rows.size() == Approx(s.at("ttft_s").at("mean").get<double>()).epsilon(1e-6));
  // The link metering's view, node by node: the bytes into each SNIC are the records' reads there.
  for (const auto& [node, bytes] : node_bytes)
    CHECK(e2e::node_link_bytes(res, "snic", node, "in") == Approx(bytes).epsilon(1e-9));
}

TEST_CASE("Requests: JSONL -> the same records as CSV, and a rerun writes the same bytes", "[e2e]") {
  e2e::Scratch scratch;
  const std::string csv = (scratch.dir / "a.csv").string(), csv2 = (scratch.dir / "b.csv").string(),
                    jsonl = (scratch.dir / "a.jsonl").string();
  e2e::run_ok(kRequestsOnline, {"outputs.requests=" + csv});
  e2e::run_ok(kRequestsOnline, {"outputs.requests=" + csv2});
  e2e::run_ok(kRequestsOnline, {"outputs.requests=" + jsonl});
  const std::string text = e2e::read_text(csv);
  CHECK(!text.empty());
  CHECK(text == e2e::read_text(csv2));
  const auto rows = read_csv(csv);
  const auto lines = e2e::read_jsonl(jsonl);
  REQUIRE(lines.size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(lines[i].size() == kColumns.size());
    for (const auto& k : kColumns) {
      const auto& v = lines[i].at(k);
      const std::string& c = rows[i].at(k);
      if (c.empty()) {
        CHECK(v.is_null());
      } else if (v.is_string()) {
        CHECK(v.get<std::string>() == c);
      } else {
        CHECK(v.get<double>() == std::stod(c));
      }
    }
  }
  // No temporary file is left beside the records.
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(scratch.dir)) files++;
  CHECK(files == 3);
}

TEST_CASE("Requests: a path that is not .csv or .jsonl, or a directory -> exit 2 before the run", "[e2e]") {
  e2e::Scratch scratch;
  const auto bad =
      e2e::run_dpsim(kRequestsOnline, {"outputs.requests=" + (scratch.dir / "turns.txt").string()});
  CHECK(bad.exit_code == 2);
  CHECK(bad.stderr_text.find("outputs.requests") != std::string::npos);
  CHECK(bad.stderr_text.find(".csv or .jsonl") != std::string::npos);
  CHECK(bad.result.is_null());
  std::filesystem::create_directories(scratch.dir / "d.csv");
  const auto dir = e2e::run_dpsim(kRequestsOnline, {"outputs.requests=" + (scratch.dir / "d.csv").string()});
  CHECK(dir.exit_code == 2);
  CHECK(dir.stderr_text.find("outputs.requests") != std::string::npos);
  CHECK(dir.stderr_text.find("is a directory") != std::string::npos);
  CHECK(dir.result.is_null());
}
