// The engine file end to end (models/engine/, sim/config/engine.h), as a user sets it: MTP's accepted
// tokens in the decode timings, the CPU time per decode step and per prefill pass through --set
// engine_overrides, the time split of the results against hand counts and a second accumulation, and the
// prefill's hand-off to decode DRAM buffers with the engine's largest pass (tests/e2e/cases/
// handoff_4p4d.json) against a negative control without it; MTP only on a model with a draft module.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "tests/e2e/support.h"

namespace {

const std::string kEngineIo = e2e::case_file("io_1p1d.json");

// The request records of a run of `scenario` with `sets` (outputs.requests to a scratch file), by column.
struct Records {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  double at(size_t row, const std::string& column) const {
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == column) return std::stod(rows.at(row).at(c));
    FAIL("no column " << column);
    return 0;
  }
};

Records records(const std::string& scenario, std::vector<std::string> sets,
                nlohmann::json* result = nullptr) {
  e2e::Scratch s;
  const std::string csv = (s.dir / "r.csv").string();
  sets.push_back("outputs.requests=" + csv);
  const nlohmann::json r = e2e::run_ok(scenario, sets);
  if (result != nullptr) *result = r;
  auto lines = e2e::read_csv(csv);
  Records out;
  out.header = lines.at(0);
  out.rows.assign(lines.begin() + 1, lines.end());
  return out;
}

// The io fixture's turns (tests/e2e/cases/one_agent.jsonl): their output tokens.
std::vector<double> io_gens() {
  std::vector<double> g;
  const std::vector<nlohmann::json> trace = e2e::read_jsonl(e2e::case_file("one_agent.jsonl"));
  for (const auto& t : trace.at(0).at("turns")) g.push_back(t.at("gen").get<double>());
  return g;
}

double io_step_s() {
  return e2e::read_json(e2e::case_file("e2e-io-engine.json")).at("decode").at("cpu_s").get<double>();
}

}  // namespace

TEST_CASE(
    "MTP: one draft token accepted half the time -> a turn's gen - 1 tokens in ceil((gen - 1) / 1.5) steps",
    "[e2e]") {
  // On the io fixture a decode step is its 0.5 ms of CPU (compute is below 1e-6 s): the step does not grow
  // with the second query. A request's first token comes from the prefill, its second with the first step;
  // it is done when its gen - 1 tokens are in, at 1 + 0.5 = 1.5 accepted tokens per step: (gen 100) 66
  // steps, (50) 33, (20) 13. So done - second token = (steps - 1) x 0.5 ms: 32.5, 16 and 6 ms, against 49,
  // 24 and 9 ms without MTP. A model that counted one token per step, or that drew a whole second token
  // every step, fails.
  const double tau = io_step_s();
  const std::vector<double> gens = io_gens();
  const Records plain = records(kEngineIo, {});
  const Records mtp = records(
      kEngineIo, {"engine_overrides.decode.mtp.draft_tokens=1", "engine_overrides.decode.mtp.acceptance=0.5",
                  "engine_overrides.decode.mtp.module_layers=1"});
  REQUIRE(plain.rows.size() == gens.size());
  REQUIRE(mtp.rows.size() == gens.size());
  for (size_t i = 0; i < gens.size(); ++i) {
    INFO("turn " << i << ", gen " << gens[i]);
    const double steps = std::ceil((gens[i] - 1) / 1.5);
    CHECK(mtp.at(i, "done_s") - mtp.at(i, "second_token_s") == Approx((steps - 1) * tau).margin(1e-6));
    CHECK(plain.at(i, "done_s") - plain.at(i, "second_token_s") == Approx((gens[i] - 2) * tau).margin(1e-6));
    // TPOT over the tokens after the second: fewer steps for as many tokens.
    CHECK(mtp.at(i, "tpot_s") == Approx((steps - 1) * tau / (gens[i] - 2)).margin(1e-8));
  }
}

TEST_CASE("CPU time: engine_overrides by --set -> 2 ms per decode step, 10 ms per prefill pass, by hand",
          "[e2e]") {
  // The io fixture's step is its CPU time: 0.5 ms, then 2 ms per step with decode.cpu_s = 0.002; each turn's
  // prefill is one pass (one agent, negligible compute) that waits 10 ms more with prefill.cpu_s = 0.01.
  const std::vector<double> gens = io_gens();
  nlohmann::json base_r, cpu_r;
  const Records base = records(kEngineIo, {}, &base_r);
  const Records cpu = records(
      kEngineIo, {"engine_overrides.decode.cpu_s=0.002", "engine_overrides.prefill.cpu_s=0.01"}, &cpu_r);
  CHECK(cpu_r.at("scenario").at("engine_overrides").at("decode").at("cpu_s") == 0.002);
  double steps = 0;
  for (size_t i = 0; i < gens.size(); ++i) {
    INFO("turn " << i);
    CHECK(cpu.at(i, "done_s") - cpu.at(i, "second_token_s") == Approx((gens[i] - 2) * 0.002).margin(1e-6));
    CHECK((cpu.at(i, "first_token_s") - cpu.at(i, "prefill_start_s")) -
              (base.at(i, "first_token_s") - base.at(i, "prefill_start_s")) ==
          Approx(0.01).margin(1e-9));
    steps += gens[i] - 1;
  }
  // The time split counts them: 266 steps x 2 ms of decode CPU, 4 passes x 10 ms of prefill CPU (one GPU
  // each); without the overrides, the fixture's 0.5 ms per step and none per pass.
  CHECK(cpu_r.at("summary").at("time_split").at("decode").at("cpu_s").get<double>() ==
        Approx(steps * 0.002).epsilon(1e-9));
  CHECK(cpu_r.at("summary").at("time_split").at("prefill").at("cpu_s").get<double>() ==
        Approx(gens.size() * 0.01).epsilon(1e-9));
  CHECK(base_r.at("summary").at("time_split").at("decode").at("cpu_s").get<double>() ==
        Approx(steps * io_step_s()).epsilon(1e-9));
  CHECK(base_r.at("summary").at("time_split").at("prefill").at("cpu_s").get<double>() == 0);
}

TEST_CASE(
    "Time split: DeepSeek's decode profile and DS 660B Basic -> its parts add to the GPUs' time and match "
    "their busy and held times",
    "[e2e]") {
  // Two accumulations of the same time. The split adds, per pass or step plan, each GPU's own time (compute,
  // exchange, fixed, CPU: cost/compute_plan.h), its wait for the group's slowest GPU (imbalance), and what
  // the plan's wall time took beyond it (stall). resources.gpu adds each prefill GPU's executions (busy_s:
  // its own time) and its time in passes (pass_s), and each decode GPU's time with a non-empty batch
  // (busy_s; in the decode profile every decode GPU holds requests but at the ramp and the drain: within
  // 1%). DS 660B's Basic at 128 agents has DP attention of unequal prompts: its prefill GPUs wait for each
  // other, and decode GPUs without requests step with their group.
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"scenarios/validation/deepseek-decode-profile.json", {}},
      {"scenarios/paper/ds660b-64k.json",
       {"workload.agents=128", "policy.read_path=pe", "policy.layerwise=false",
        "outputs.timeseries_interval_s=0"}}};
  for (const auto& [file, sets] : runs) {
    INFO(file);
    const nlohmann::json r = e2e::run_ok(e2e::repo_file(file), sets, 120);
    const auto& split = r.at("summary").at("time_split");
    const double end = r.at("summary").at("sim_end_s").get<double>();
    for (const char* role : {"prefill", "decode"}) {
      INFO(role);
      const auto& t = split.at(role);
      double busy = 0, held = 0;
      int gpus = 0;
      for (const auto& g : r.at("resources").at("gpu")) {
        if (g.at("role") != role) continue;
        gpus++;
        busy += g.at("busy_s").get<double>();
        held += g.value("pass_s", g.at("busy_s").get<double>());
      }
      const double own = t.at("compute_s").get<double>() + t.at("exchange_s").get<double>() +
                         t.at("fixed_s").get<double>() + t.at("cpu_s").get<double>();
      const double in_plans = own + t.at("imbalance_s").get<double>() + t.at("stall_s").get<double>();
      CHECK(t.at("gpu_s").get<double>() == Approx(gpus * end).epsilon(1e-12));
      CHECK(in_plans + t.at("idle_s").get<double>() == Approx(gpus * end).epsilon(1e-9));
      if (std::string(role) == "prefill") {
        CHECK(own == Approx(busy).epsilon(1e-9));
        CHECK(in_plans == Approx(held).epsilon(1e-9));
      } else if (file.find("decode-profile") != std::string::npos) {
        CHECK(in_plans == Approx(held).epsilon(1e-2));
      } else {  // a decode GPU without requests still steps with its group: held, not busy
        CHECK(in_plans >= held * (1 - 1e-9));
      }
      for (const char* k : {"compute_s", "exchange_s", "fixed_s", "imbalance_s", "stall_s", "idle_s"})
        CHECK(t.at(k).get<double>() >= 0);
    }
  }
}

TEST_CASE(
    "Hand-off: 4P4D, 2K prompts queued -> the prefill GPUs compute >= 85% of the time with 16K-token "
    "passes, and not without the cap",
    "[e2e]") {
  // One EP32 prefill unit with 4,000 prompts queued at once. With the engine's largest pass (16,384 tokens
  // per GPU), each pass takes 8 prompts per GPU and hands their KV to the decode buffers as it ends. Without
  // it, a GPU's first pass takes every prompt whose KV found room (about 550 per decode node's 80 GB
  // buffer): one long pass per GPU whose KV holds the decode buffers for its whole length, while GPUs that
  // found no room wait: the buffers fill, the prefill GPUs idle.
  const std::string file = e2e::case_file("handoff_4p4d.json");
  const nlohmann::json capped = e2e::run_ok(file, {}, 60);
  const nlohmann::json uncapped = e2e::run_ok(file, {"engine_overrides.prefill.max_pass_tokens=0"}, 60);
  const auto& c = capped.at("resource_classes");
  const auto& u = uncapped.at("resource_classes");
  INFO("capped: prefill.gpu.compute "
       << c.at("prefill.gpu.compute") << ", decode.buffer.occupancy " << c.at("decode.buffer.occupancy")
       << "; uncapped: " << u.at("prefill.gpu.compute") << ", " << u.at("decode.buffer.occupancy"));
  CHECK(c.at("prefill.gpu.compute").get<double>() >= 0.85);
  CHECK(capped.at("bottleneck").at("resource").get<std::string>().rfind("prefill.gpu", 0) == 0);
  CHECK(u.at("prefill.gpu.compute").get<double>() < 0.85);
  CHECK(u.at("decode.buffer.occupancy").get<double>() > 2 * c.at("decode.buffer.occupancy").get<double>());
  CHECK(uncapped.at("summary").at("jct_s").get<double>() >
        1.2 * capped.at("summary").at("jct_s").get<double>());
}

namespace {

// A Mistral-7B-like config (public v0.3 config: dense GQA, no MTP module): 32 layers of hidden 4096, 32 query
// and 8 KV heads of 128, MLP 14336, vocabulary 32768, untied, BF16. By hand: per layer q and o 4096 x 4096,
// k and v 4096 x 1024, MLP 3 x 4096 x 14336, two norms of 4096 = 218,112,000; x 32 + embedding and lm head
// 2 x 32768 x 4096 + final norm 4096 = 7,248,023,552 parameters, 14.496 GB in BF16; KV 32 x 2 x 8 x 128 x 2 B
// = 131,072 B per token.
constexpr const char* kMistralLike = R"({
  "architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
  "head_dim": 128, "vocab_size": 32768, "max_position_embeddings": 32768, "sliding_window": null,
  "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";
constexpr double kMistralWeightBytes = 7248023552.0 * 2;
constexpr double kMistralKvPerToken = 131072;
constexpr double kHopperHbmBps = 3.35e12;  // models/hardware/hopper-8x400g.json, gpu.hbm_bw_Bps

// The turns (of more than two output tokens) whose TPOT is below one read of the weights and of their own
// KV at the HBM bandwidth: a decode step reads both, whatever else it does.
int turns_below_one_read(const Records& r) {
  int below = 0;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.at(i, "gen_tokens") < 3) continue;
    const double context = r.at(i, "hit_tokens") + r.at(i, "miss_tokens");
    if (r.at(i, "tpot_s") < (kMistralWeightBytes + context * kMistralKvPerToken) / kHopperHbmBps) ++below;
  }
  return below;
}

}  // namespace

TEST_CASE(
    "MTP needs a draft module: a Mistral-7B-like import decodes one token per step under "
    "deepseek-v3-production, no TPOT below one read of its weights and KV, DeepSeek-V3 runs MTP",
    "[e2e]") {
  e2e::Scratch s;
  REQUIRE_FALSE(s.dir.empty());
  { std::ofstream(s.dir / "config.json") << kMistralLike; }
  const std::string model = (s.dir / "mistral-7b-like.json").string();
  REQUIRE(e2e::shell(e2e::shell_quoted(e2e::dpsim_binary()) + " model import " +
                     e2e::shell_quoted((s.dir / "config.json").string()) +
                     " --name mistral-7b-like --kv bf16" + " --out " + e2e::shell_quoted(model) +
                     " >/dev/null") == 0);
  const nlohmann::json imported = e2e::read_json(model);
  REQUIRE(imported.at("params").at("total").get<double>() == 7248023552.0);  // the hand count above
  CHECK_FALSE(imported.contains("mtp_modules"));                             // the config has none

  const std::string scenario = e2e::repo_file("scenarios/paper/ds660b-32k.json");
  const std::vector<std::string> small = {"engine=deepseek-v3-production", "workload.agents=16",
                                          "workload.generator.trajectories=16", "cluster.prefill_nodes=1",
                                          "cluster.decode_nodes=1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> sets = small;
    sets.insert(sets.end(), extra.begin(), extra.end());
    return sets;
  };
  nlohmann::json r;
  const Records plain = records(scenario, with({"model=" + model}), &r);
  const auto& mtp = r.at("summary").at("mtp");
  CHECK(mtp.at("draft_tokens") == 0);
  CHECK(mtp.at("not_run_draft_tokens") == 1);  // deepseek-v3-production's one draft token
  CHECK(mtp.at("tokens_per_step").get<double>() == 1);
  CHECK(r.at("summary").at("setup").at("model") == "mistral-7b-like");
  REQUIRE(plain.rows.size() > 100);
  CHECK(turns_below_one_read(plain) == 0);

  // Negative control: the same model file claiming a draft module runs the engine's MTP (1.875 tokens per
  // step), and its TPOT falls below one read of the weights: the check above would catch MTP on this model.
  nlohmann::json claimed = imported;
  claimed["mtp_modules"] = 1;
  const std::string claimed_file = (s.dir / "claimed.json").string();
  std::ofstream(claimed_file) << claimed.dump();
  nlohmann::json rc;
  const Records with_mtp = records(scenario, with({"model=" + claimed_file}), &rc);
  CHECK(rc.at("summary").at("mtp").at("draft_tokens") == 1);
  CHECK(rc.at("summary").at("mtp").at("tokens_per_step").get<double>() == Approx(1.875));
  CHECK(turns_below_one_read(with_mtp) > 0);

  // DeepSeek-V3 carries its MTP module (models/llm/dsv3.json, mtp_modules 1): the engine's MTP runs, and a
  // step's tokens cut the TPOT against the same run without it.
  const std::vector<std::string> v3 = {"model=dsv3", "cluster.prefill_nodes=4", "cluster.decode_nodes=4",
                                       "cluster.prefill_ep_gpus=32", "cluster.decode_ep_gpus=32"};
  auto v3_sets = small;
  v3_sets.insert(v3_sets.end(), v3.begin(), v3.end());
  const nlohmann::json on = e2e::run_ok(scenario, v3_sets, 60);
  v3_sets.push_back("engine_overrides.decode.mtp.draft_tokens=0");
  const nlohmann::json off = e2e::run_ok(scenario, v3_sets, 60);
  CHECK(on.at("summary").at("mtp").at("draft_tokens") == 1);
  CHECK(on.at("summary").at("mtp").at("not_run_draft_tokens") == 0);
  CHECK(on.at("summary").at("tpot_s").at("mean").get<double>() <
        0.8 * off.at("summary").at("tpot_s").at("mean").get<double>());
}
