// End-to-end checks of `dpsim ablation` (sim/study/ablation.h) and of the load-blind read path it adds
// (read_path=alternate): on the storage-bound DS 27B case at 1P2D, each step's JCT against a `dpsim run`
// with the step's toggles, the two definitions of the dual-path step, and the share of requests each side
// reads.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

const std::string kAblationCase = e2e::case_file("props_ds27b.json");
const std::vector<std::string> kSmall = {"cluster.decode_nodes=2", "workload.max_turns=4"};

}  // namespace

TEST_CASE("Ablation: five steps and two definitions -> each step's JCT is a dpsim run's with its toggles",
          "[e2e]") {
  e2e::Scratch s;
  const auto out = s.dir / "abl";
  const auto log = s.dir / "abl.log";
  std::string cmd = e2e::timeout_prefix(120) + e2e::shell_quoted(e2e::dpsim_binary()) + " ablation " +
                    e2e::shell_quoted(kAblationCase) + " --agents 16,32 --jobs 2 --out " +
                    e2e::shell_quoted(out.string());
  for (const auto& set : kSmall) cmd += " --set " + set;
  REQUIRE(e2e::shell(cmd + " >" + e2e::shell_quoted(log.string()) + " 2>&1") == 0);
  const std::string text = e2e::read_text(log);
  INFO(text);
  const nlohmann::json sum = e2e::read_json((out / "summary.json").string());
  // The paper's definition goes through the load-blind dual-path step, the queue-aware one through the
  // queue-aware choice; both start at Basic and end at the scheduler.
  const std::vector<std::string> paper = {"basic", "layerwise", "dualpath-blind", "scheduler"};
  const std::vector<std::string> queue_aware = {"basic", "layerwise", "dualpath", "scheduler"};
  CHECK(sum.at("definitions").at("paper").at("steps").get<std::vector<std::string>>() == paper);
  CHECK(sum.at("definitions").at("queue-aware").at("steps").get<std::vector<std::string>>() == queue_aware);
  CHECK(text.find("paper:") != std::string::npos);
  CHECK(text.find("queue-aware:") != std::string::npos);
  REQUIRE(sum.at("steps").size() == 5);
  REQUIRE(sum.at("rows").size() == 2);
  // Each step against an independent run of the same scenario with the step's toggles (and nothing of the
  // scenario file's policy block): the same JCT, to the bit (a fixed seed).
  std::map<std::string, std::vector<std::string>> toggles;
  for (const auto& st : sum.at("steps"))
    toggles[st.at("step")] = st.at("sets").get<std::vector<std::string>>();
  CHECK(toggles.at("dualpath-blind") ==
        std::vector<std::string>{"policy.read_path=alternate", "policy.layerwise=true",
                                 "policy.scheduler=round_robin", "policy.batching=fifo"});
  // The scheduler step is the paper's scheduling whole: Algorithm 1 and the compute quota.
  CHECK(toggles.at("scheduler") ==
        std::vector<std::string>{"policy.read_path=dualpath", "policy.layerwise=true",
                                 "policy.scheduler=dualpath", "policy.batching=quota"});
  for (const auto& row : sum.at("rows")) {
    const int agents = row.at("agents");
    for (const auto& r : row.at("runs")) {
      const std::string step = r.at("step");
      INFO(agents << " agents, step " << step);
      std::vector<std::string> sets = kSmall;
      sets.push_back("workload.agents=" + std::to_string(agents));
      for (const auto& t : toggles.at(step)) sets.push_back(t);
      const nlohmann::json direct = e2e::run_ok(kAblationCase, sets);
      CHECK(r.at("jct_s").get<double>() == direct.at("summary").at("jct_s").get<double>());
      CHECK(r.at("complete").get<bool>());
      CHECK(direct.at("scenario").at("policy").at("batching") == (step == "scheduler" ? "quota" : "fifo"));
      CHECK(direct.at("scenario").at("policy").at("read_path") == (step == "basic" || step == "layerwise"
                                                                       ? "pe"
                                                                   : step == "dualpath-blind" ? "alternate"
                                                                                              : "dualpath"));
    }
  }
}

TEST_CASE("Read path alternate: 1P2D -> two of every three requests with a hit read on the DE side",
          "[e2e]") {
  // D/(P + D) = 2/3 of the requests that read anything, in submission order, whatever the queues: 16 agents'
  // 4 turns, 16 of them cold (nothing to read), 48 reading: 32 on the DE side, 16 on the PE side. The
  // queue-aware choice on the same run reads by the queues, a different count.
  e2e::Scratch s;
  const std::string csv = (s.dir / "r.csv").string();
  auto sides = [&](const std::string& policy) {
    std::vector<std::string> sets = kSmall;
    sets.insert(sets.end(), {"workload.agents=16", "policy.read_path=" + policy, "outputs.requests=" + csv});
    e2e::run_ok(kAblationCase, sets);
    const auto rows = e2e::read_csv(csv);
    REQUIRE(rows.at(0).at(15) == "read_path");
    std::map<std::string, int> n;
    for (size_t i = 1; i < rows.size(); ++i) n[rows[i][15]]++;
    return n;
  };
  const auto alt = sides("alternate");
  CHECK(alt.at("none") == 16);
  CHECK(alt.at("de") == 32);
  CHECK(alt.at("pe") == 16);
  const auto queued = sides("dualpath");
  CHECK(queued.at("de") != 32);
}
