// Names of the registered policies (from policies.def), for validation and error messages.
#pragma once

#include <string>
#include <vector>

namespace sim::policy {

const std::vector<std::string>& read_path_names();
const std::vector<std::string>& scheduler_names();
const std::vector<std::string>& eviction_names();

}  // namespace sim::policy
