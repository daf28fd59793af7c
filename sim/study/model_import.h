// `dpsim model import CONFIG.json`: writes a model file from a Hugging Face config (sim/hf/import.h) and
// reports what it derived: the family, the parameters, the KV cache per token, the precision and where each
// came from, the deployment units and the HBM they leave for KV.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "sim/hf/import.h"
#include "sim/study/study.h"

namespace sim::study {

struct ModelImportSpec {
  hf::ImportSpec import;
  std::string out;     // "" = models/llm/<name>.json of the project
  bool force = false;  // overwrite an existing file
};

// The file is written atomically, and only when the import succeeded.
StatusOr<Outcome> model_import(const ModelImportSpec& spec);

}  // namespace sim::study
