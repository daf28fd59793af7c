// libFuzzer harness: bytes -> sim::workload::parse_azure (an Azure LLM inference trace, CSV).
#include "sim/workload/azure.h"
#include "tests/fuzz/request_trace_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz/azure.csv";
  auto r = sim::workload::parse_azure(sim::fuzz::as_text(data, size), name);
  if (!r) {
    sim::fuzz::check_error_names_file(r.status(), name);
    return 0;
  }
  sim::fuzz::check_request_trace(*r);
  return 0;
}
