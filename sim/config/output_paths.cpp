#include "sim/config/output_paths.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "sim/core/paths.h"

namespace sim::config {

namespace {

struct Named {
  std::string what;  // how a message names it
  std::string path;
};

std::vector<Named> inputs_of(const ScenarioConfig& sc) {
  std::vector<Named> in = {{"the scenario file", sc.file},
                           {"the model file", sc.model_file},
                           {"the hardware file", sc.hardware_file},
                           {"the prefill hardware file", sc.prefill_hardware_file},
                           {"the decode hardware file", sc.decode_hardware_file},
                           {"the engine file", sc.engine_file},
                           {"the trace (workload.trace)", sc.workload.trace}};
  std::vector<Named> out;
  for (auto& n : in)
    if (!n.path.empty()) out.push_back(std::move(n));
  return out;
}

}  // namespace

Status check_output_paths(const ScenarioConfig& sc, const std::string& results,
                          const std::string& results_flag) {
  if (results.empty())
    return Status::error(fmt::format("{}: an empty path, expected a file to write", results_flag));
  std::vector<Named> outputs = {{results_flag, results}};
  if (!sc.outputs.requests.empty()) outputs.push_back({"outputs.requests", sc.outputs.requests});
  if (!sc.outputs.timeline.empty()) outputs.push_back({"outputs.timeline", sc.outputs.timeline});
  const std::vector<Named> inputs = inputs_of(sc);
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const Named& in : inputs)
      if (same_file(outputs[i].path, in.path))
        return Status::error(fmt::format("{} {} is {} ({}): an output must not overwrite an input",
                                         outputs[i].what, outputs[i].path, in.what, in.path));
    for (size_t j = 0; j < i; ++j)
      if (same_file(outputs[i].path, outputs[j].path))
        return Status::error(fmt::format("{} {} is also {} ({}): two outputs of one run must be two files",
                                         outputs[i].what, outputs[i].path, outputs[j].what, outputs[j].path));
  }
  return Status::ok();
}

}  // namespace sim::config
