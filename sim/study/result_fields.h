// Tolerant reads of a results JSON for the commands that summarise many runs (sweep, props): a missing
// key or a wrong type reads as null or as the default, so that one odd result cannot abort a summary.
#pragma once

#include <nlohmann/json.hpp>

namespace sim::study {

// j[k] when j is an object holding k, else null.
inline const nlohmann::json& field(const nlohmann::json& j, const char* k) {
  static const nlohmann::json kNull;
  return j.is_object() && j.contains(k) ? j[k] : kNull;
}

// j as a number, or `def` when it is not one.
inline double number_or(const nlohmann::json& j, double def = 0) {
  return j.is_number() ? j.get<double>() : def;
}

}  // namespace sim::study
