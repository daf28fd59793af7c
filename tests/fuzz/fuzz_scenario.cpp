// libFuzzer harness: bytes -> sim::config::parse_scenario. The input is the scenario text, optionally
// followed by NUL-separated `--set` assignments (at most 4). The scenario stands for a file directly under
// the project's scenarios/, so that bare hardware/model names and the real scenarios of the seed corpus
// resolve to the project's models/ (those files are read; the scenario text never is written anywhere).
#include <vector>

#include "sim/config/scenario.h"
#include "sim/core/paths.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string name = std::string(sim::project_root()) + "/scenarios/fuzz-input.json";
  const std::string all = sim::fuzz::as_text(data, size);
  size_t end = all.find('\0');
  const std::string text = all.substr(0, end);
  std::vector<std::string> overrides;
  while (end != std::string::npos && overrides.size() < 4) {
    const size_t next = all.find('\0', end + 1);
    overrides.push_back(all.substr(end + 1, next == std::string::npos ? std::string::npos : next - end - 1));
    end = next;
  }
  sim::StatusOr<sim::config::ScenarioConfig> sc = sim::config::parse_scenario(text, name, overrides);
  if (!sc) {
    sim::fuzz::check_error_names_file(sc.status(), name);
    return 0;
  }
  if (sc->cluster.prefill_nodes < 1 || sc->cluster.decode_nodes < 1 || !sc->resolved.is_object())
    sim::fuzz::contract_broken("accepted scenario with unusable values", sc->name);
  // MTP runs only on a model with a draft module (config/scenario.cpp).
  if (sc->model.mtp_modules == 0 && sc->engine.mtp_draft_tokens > 0)
    sim::fuzz::contract_broken("accepted scenario running MTP on a model without a draft module", sc->name);
  (void)sc->resolved.dump();  // the echo written into every results file must serialise
  return 0;
}
