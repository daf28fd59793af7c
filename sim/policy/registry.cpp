#include "sim/policy/registry.h"

#include "sim/policy/names.h"

namespace sim::policy {

#define READ_PATH_POLICY(name, factory) std::unique_ptr<ReadPathPolicy> factory();
#define SCHEDULER_POLICY(name, factory) std::unique_ptr<SchedulerPolicy> factory();
#define EVICTION_POLICY(name, factory) std::unique_ptr<EvictionPolicy> factory();
#include "sim/policy/policies.def"

namespace {

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

StatusOr<std::unique_ptr<ReadPathPolicy>> make_read_path(const std::string& name) {
#define READ_PATH_POLICY(n, factory) \
  if (name == (n)) return (factory)();
#include "sim/policy/policies.def"
  return Status::error("unknown read-path policy '" + name + "' (expected one of " + list(read_path_names()) +
                       ")");
}

StatusOr<std::unique_ptr<SchedulerPolicy>> make_scheduler(const std::string& name) {
#define SCHEDULER_POLICY(n, factory) \
  if (name == (n)) return (factory)();
#include "sim/policy/policies.def"
  return Status::error("unknown scheduler policy '" + name + "' (expected one of " + list(scheduler_names()) +
                       ")");
}

StatusOr<std::unique_ptr<EvictionPolicy>> make_eviction(const std::string& name) {
#define EVICTION_POLICY(n, factory) \
  if (name == (n)) return (factory)();
#include "sim/policy/policies.def"
  return Status::error("unknown eviction policy '" + name + "' (expected one of " + list(eviction_names()) +
                       ")");
}

}  // namespace sim::policy
