// Policy factories by name (the names and factories are listed once, in policies.def).
#pragma once

#include <memory>
#include <string>

#include "sim/core/status.h"
#include "sim/policy/eviction.h"
#include "sim/policy/read_path.h"
#include "sim/policy/scheduler.h"

namespace sim::policy {

StatusOr<std::unique_ptr<ReadPathPolicy>> make_read_path(const std::string& name);
StatusOr<std::unique_ptr<SchedulerPolicy>> make_scheduler(const std::string& name);
StatusOr<std::unique_ptr<EvictionPolicy>> make_eviction(const std::string& name);

}  // namespace sim::policy
