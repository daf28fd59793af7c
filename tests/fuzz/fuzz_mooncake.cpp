// libFuzzer harness: bytes -> sim::workload::parse_mooncake (a Mooncake trace, JSONL). The options vary
// with the input's length (deterministic, so a crash reproduces from its file alone).
#include "sim/workload/mooncake.h"
#include "tests/fuzz/request_trace_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz/mooncake.jsonl";
  sim::workload::MooncakeOptions options;
  options.spread_buckets = size % 2 == 0;
  options.shared_fanout = 2 + static_cast<int>(size / 2 % 20);
  auto r = sim::workload::parse_mooncake(sim::fuzz::as_text(data, size), name, options);
  if (!r) {
    sim::fuzz::check_error_names_file(r.status(), name);
    return 0;
  }
  sim::fuzz::check_request_trace(*r);
  return 0;
}
