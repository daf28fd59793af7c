// Test support: a bound or condition of a bottleneck-free range by its key (FAILs the test when absent), and
// the paper's NIC bandwidth.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "sim/cost/bottleneck.h"

namespace test_support {

// The paper's NIC bandwidth B: 400 Gbps = 50e9 B/s.
inline constexpr double kB = 50e9;

inline const sim::cost::BoundTerm& term(const sim::cost::BottleneckRange& r, const std::string& key) {
  for (const auto* list : {&r.terms, &r.conditions})
    for (const auto& t : *list)
      if (t.key == key) return t;
  FAIL("no term " << key);
  return r.terms.front();
}

}  // namespace test_support
