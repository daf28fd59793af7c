// libFuzzer harness: bytes -> sim::workload::parse_alibaba (an Alibaba agentic trace, JSONL).
#include "sim/workload/alibaba.h"
#include "tests/fuzz/request_trace_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz/alibaba.jsonl";
  auto r = sim::workload::parse_alibaba(sim::fuzz::as_text(data, size), name);
  if (!r) {
    sim::fuzz::check_error_names_file(r.status(), name);
    return 0;
  }
  sim::fuzz::check_request_trace(*r);
  return 0;
}
