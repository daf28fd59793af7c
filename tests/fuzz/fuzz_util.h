// Shared helpers of the libFuzzer harnesses (tests/fuzz/README.md). Each harness feeds arbitrary bytes to
// one loader, which must return an error Status (never throw, abort, leak or hit undefined behaviour);
// the checks below trap on a broken contract so that libFuzzer records the input as a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/core/status.h"

namespace sim::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Traps (a libFuzzer crash) with `why` on stderr.
[[noreturn]] inline void contract_broken(const char* why, const std::string& detail) {
  std::fprintf(stderr, "fuzz contract broken: %s: %s\n", why, detail.c_str());
  __builtin_trap();
}

// An error message must name the input first ("<name>: ..." or "<name>:<line>: ..."), as STYLE.md asks.
inline void check_error_names_file(const Status& s, const std::string& name) {
  if (s.message().compare(0, name.size(), name) != 0)
    contract_broken("error does not start with the file", s.message());
}

}  // namespace sim::fuzz
