// libFuzzer harness: bytes -> sim::workload::parse_trajectories (native trajectory JSONL). An accepted
// file must survive format -> parse unchanged (the writer and the reader agree).
#include "sim/workload/trajectory.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

bool same(const std::vector<sim::workload::Trajectory>& a, const std::vector<sim::workload::Trajectory>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id || a[i].turns.size() != b[i].turns.size()) return false;
    for (size_t k = 0; k < a[i].turns.size(); ++k) {
      const auto& x = a[i].turns[k];
      const auto& y = b[i].turns[k];
      if (x.append != y.append || x.gen != y.gen || x.think_s != y.think_s) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz/trace.jsonl";
  auto ts = sim::workload::parse_trajectories(sim::fuzz::as_text(data, size), name);
  if (!ts) {
    sim::fuzz::check_error_names_file(ts.status(), name);
    return 0;
  }
  for (const auto& t : *ts)
    if (sim::workload::total_tokens(t) < 2) sim::fuzz::contract_broken("accepted an empty trajectory", t.id);
  const std::string text = sim::workload::format_trajectories(*ts);
  auto again = sim::workload::parse_trajectories(text, name);
  if (!again) sim::fuzz::contract_broken("formatted trajectories do not parse", again.status().message());
  if (!same(*ts, *again)) sim::fuzz::contract_broken("format -> parse changed the trajectories", text);
  return 0;
}
