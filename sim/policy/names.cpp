#include "sim/policy/names.h"

namespace sim::policy {

const std::vector<std::string>& read_path_names() {
  static const std::vector<std::string> names = {
#define READ_PATH_POLICY(name, factory) name,
#include "sim/policy/policies.def"
  };
  return names;
}

const std::vector<std::string>& scheduler_names() {
  static const std::vector<std::string> names = {
#define SCHEDULER_POLICY(name, factory) name,
#include "sim/policy/policies.def"
  };
  return names;
}

const std::vector<std::string>& eviction_names() {
  static const std::vector<std::string> names = {
#define EVICTION_POLICY(name, factory) name,
#include "sim/policy/policies.def"
  };
  return names;
}

}  // namespace sim::policy
