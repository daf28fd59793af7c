// `dpsim model import`: a Hugging Face config.json in, a dpsim model file out (models/llm/README.md,
// "Importing a config"). The architecture comes from the config (architecture.h, one derivation per family),
// the precision from its quantization fields or the flags (precision.h), the deployment units from the
// node file (deployment.h). The text written is read back by the model loader before it is returned, so an
// import never writes a file dpsim would refuse.
#pragma once

#include <string>

#include "sim/config/hardware.h"
#include "sim/config/model_spec.h"
#include "sim/core/status.h"
#include "sim/hf/architecture.h"
#include "sim/hf/precision.h"

namespace sim::hf {

struct ImportSpec {
  std::string config;                      // the config.json
  std::string name;                        // "" = the config's directory (for config.json) or file stem
  std::string hardware = "hopper-8x400g";  // node file (a bare name is models/hardware/<name>.json)
  PrecisionFlags precision;
  int prefill_ep = -1, decode_ep = -1;  // GPUs per deployment unit; -1 = the smallest that fits
  long long kv_room_tokens = -1;        // KV tokens a GPU must hold beside the weights; -1 = max context
};

struct Imported {
  std::string name;
  std::string text;  // the model file
  config::ModelSpec model;
  Architecture arch;
  Precision precision;
  int prefill_ep = 1, decode_ep = 1;
  double kv_room_tokens = 0;
};

// The name an import takes by default for `config_path`.
std::string default_name(const std::string& config_path);

// Reads `spec.config` and the node file; errors name the file, the key and what was expected.
StatusOr<Imported> import_config(const ImportSpec& spec);
// The same from the config's text (`file` names it in messages) and a loaded node file. Reads no file.
StatusOr<Imported> import_config_text(const std::string& text, const std::string& file,
                                      const ImportSpec& spec, const config::HardwareSpec& hw,
                                      const std::string& hw_file);

}  // namespace sim::hf
