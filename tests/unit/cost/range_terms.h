// Test support: a bound or condition of a bottleneck-free range by its key (FAILs the test when absent).
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "sim/cost/bottleneck.h"

namespace test_support {

inline const sim::cost::BoundTerm& term(const sim::cost::BottleneckRange& r, const std::string& key) {
  for (const auto* list : {&r.terms, &r.conditions})
    for (const auto& t : *list)
      if (t.key == key) return t;
  FAIL("no term " << key);
  return r.terms.front();
}

}  // namespace test_support
