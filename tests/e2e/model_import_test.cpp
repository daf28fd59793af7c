// `dpsim model import` as a user runs it: bad configs and flags fail cleanly
// (tests/bad_inputs/import_cases.tsv); a good one writes a model file once (no overwrite without --force)
// that `dpsim run` then simulates.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

namespace fs = std::filesystem;
using e2e::Scratch;
using e2e::shell_quoted;

const fs::path kImportCases = fs::path(DPSIM_SOURCE_DIR) / "tests" / "bad_inputs" / "import";

struct Invocation {
  int exit_code = -1;
  std::string err, out;
};

Invocation dpsim(const std::vector<std::string>& args, const fs::path& scratch) {
  std::string cmd = shell_quoted(e2e::dpsim_binary());
  for (const auto& a : args) cmd += " " + shell_quoted(a);
  cmd += " >" + shell_quoted((scratch / "stdout.txt").string()) + " 2>" +
         shell_quoted((scratch / "stderr.txt").string());
  const int status = std::system(cmd.c_str());
  Invocation r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = e2e::read_text(scratch / "stderr.txt");
  r.out = e2e::read_text(scratch / "stdout.txt");
  return r;
}

}  // namespace

TEST_CASE(
    "Model import: every case of tests/bad_inputs/import_cases.tsv -> exit 2, one line naming the "
    "config and the key, nothing written",
    "[e2e]") {
  std::ifstream in(kImportCases.parent_path() / "import_cases.tsv");
  int cases = 0;
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (text.empty() || text[0] == '#') continue;
    const size_t t1 = text.find('\t'), t2 = t1 == std::string::npos ? t1 : text.find('\t', t1 + 1);
    if (t2 == std::string::npos) FAIL("import_cases.tsv:" << n << ": expected three tab-separated columns");
    const std::string config = (kImportCases / text.substr(0, t1)).string();
    const std::string expected = text.substr(t2 + 1);
    std::vector<std::string> args = {"model", "import", config};
    std::istringstream extra(text.substr(t1 + 1, t2 - t1 - 1));
    for (std::string a; extra >> a;) args.push_back(a);
    Scratch scratch;
    REQUIRE_FALSE(scratch.dir.empty());
    const fs::path out_dir = scratch.dir / "out";
    fs::create_directories(out_dir);
    args.push_back("--out");
    args.push_back((out_dir / "m.json").string());
    const Invocation r = dpsim(args, scratch.dir);
    INFO("import_cases.tsv:" << n << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    std::string line;
    std::istringstream lines(r.err);
    for (std::string l; std::getline(lines, l);)
      if (line.empty() && l.find(expected) != std::string::npos) line = l;
    CHECK_THAT(line, Catch::Matchers::Contains(expected));
    CHECK_THAT(line, Catch::Matchers::Contains(config));  // the file, on the same line
    CHECK(fs::is_empty(out_dir));
    ++cases;
  }
  CHECK(cases >= 25);
}

TEST_CASE("Model import: a shipped config -> a model file written once, which dpsim run simulates", "[e2e]") {
  Scratch scratch;
  REQUIRE_FALSE(scratch.dir.empty());
  const std::string out = (scratch.dir / "oss.json").string();
  const std::string config = e2e::repo_file("models/llm/hf/gpt-oss-120b.json");
  const Invocation first =
      dpsim({"model", "import", config, "--name", "oss", "--weights", "bf16", "--kv", "bf16", "--out", out},
            scratch.dir);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.out, Catch::Matchers::Contains("MoE with GQA"));
  CHECK_THAT(first.out,
             Catch::Matchers::Contains("units on hopper-8x400g: prefill 1 GPU(s), decode 1 GPU(s)"));
  const std::string written = e2e::read_text(out);
  CHECK_THAT(written, Catch::Matchers::Contains("\"expert_weight_bytes_per_param\": 0.53125"));
  // Not again without --force: the file is left as it was.
  const Invocation again =
      dpsim({"model", "import", config, "--kv", "bf16", "--weights", "fp8", "--out", out}, scratch.dir);
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, Catch::Matchers::Contains("exists"));
  CHECK(e2e::read_text(out) == written);
  // The file is a model dpsim runs: a few agents on the paper's offline scenario.
  const e2e::Run run =
      e2e::run_dpsim(e2e::repo_file("scenarios/paper/ds660b-32k.json"),
                     {"model=" + out, "workload.agents=16", "workload.generator.trajectories=16",
                      "cluster.prefill_nodes=1", "cluster.decode_nodes=1"},
                     120);
  INFO(run.command << "\nstderr: " << run.stderr_text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.result.at("summary").at("turns_completed") == run.result.at("summary").at("turns_total"));
  CHECK(run.result.at("summary").at("kv_bytes_per_token") == 36 * 2048);
}

TEST_CASE("Model import: a dense model sharded over a unit (Llama 3.1 70B, 8 GPUs) -> tensor parallel passes",
          "[e2e]") {
  // Tensor parallel, not DP attention: every GPU of the unit computes its share of every prompt of a pass, so
  // none waits for another. As DP attention, a unit's 8 GPUs with unequal prompts would spend most of their
  // time waiting for the slowest (imbalance).
  const auto r =
      e2e::run_ok(e2e::repo_file("scenarios/paper/ds660b-32k.json"),
                  {"model=llama-3.1-70b", "workload.agents=64", "workload.generator.trajectories=64",
                   "cluster.prefill_nodes=1", "cluster.decode_nodes=1"},
                  120);
  CHECK(r.at("scenario").at("cluster").at("prefill_ep_gpus") == 8);
  const auto& split = r.at("summary").at("time_split").at("prefill");
  CHECK(split.at("compute_s").get<double>() > 0);
  CHECK(split.at("imbalance_s").get<double>() == 0);
}

TEST_CASE("Model import: a bad flag -> exit 2, one dpsim: line naming the flag, nothing written", "[e2e]") {
  // Before, -1 and an empty name fell back to the defaults, --name ../../x wrote outside models/llm/ (and
  // into the model's name), and --decode-ep 1000000 was blamed on the written file's weight_shards.
  const std::string config = e2e::repo_file("models/llm/hf/llama-3.1-70b.json");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--prefill-ep", "-1"}, "dpsim: --prefill-ep: Value -1 not in range 1 to 100000"},
      {{"--decode-ep", "-1"}, "dpsim: --decode-ep: Value -1 not in range"},
      {{"--decode-ep", "1000000"}, "dpsim: --decode-ep: Value 1000000 not in range 1 to 100000"},
      {{"--kv-room-tokens", "-5"}, "dpsim: --kv-room-tokens: expected a number of tokens >= 0, got -5"},
      {{"--name", ""}, "dpsim: --name: expected a model name, got an empty one"},
      {{"--name", "../../escaped"}, "dpsim: --name: expected a plain name (no path"},
      {{"--name", "a/b"}, "dpsim: --name: expected a plain name (no path"},
      {{"--weights", "fp9"}, "dpsim: --weights: fp9 not in {fp8,bf16,fp4}"},
  };
  for (const auto& [flags, expected] : cases) {
    Scratch scratch;
    REQUIRE_FALSE(scratch.dir.empty());
    const fs::path out_dir = scratch.dir / "out";
    fs::create_directories(out_dir);
    std::vector<std::string> args = {"model", "import", config, "--kv", "bf16"};
    args.insert(args.end(), flags.begin(), flags.end());
    // --name without --out: the file would go to models/llm/<name>.json; with a path, anywhere.
    if (flags[0] != "--name") {
      args.push_back("--out");
      args.push_back((out_dir / "m.json").string());
    }
    const Invocation r = dpsim(args, scratch.dir);
    INFO(flags[0] << " " << flags[1] << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Matchers::StartsWith(expected));
    CHECK(fs::is_empty(out_dir));
  }
  CHECK_FALSE(fs::exists(fs::path(DPSIM_SOURCE_DIR) / "escaped.json"));
}
