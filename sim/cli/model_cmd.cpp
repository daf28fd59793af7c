// `dpsim model import CONFIG.json [--name NAME] [--out FILE] [--hardware NODE] [--weights fp8|bf16|fp4]
// [--kv fp8|bf16] [--prefill-ep N] [--decode-ep N] [--kv-room-tokens N] [--force]`: a model file from a
// Hugging Face config (sim/study/model_import.h, models/llm/README.md "Importing a config").
#include <memory>

#include "sim/cli/commands.h"
#include "sim/study/model_import.h"

namespace sim::cli {

void add_model_command(CLI::App& app, int* exit_code) {
  CLI::App* model = app.add_subcommand("model", "model files (models/llm/README.md)");
  model->require_subcommand(1);
  auto args = std::make_shared<study::ModelImportSpec>();
  CLI::App* imp = model->add_subcommand("import", "write a model file from a Hugging Face config.json");
  imp->add_option("config", args->import.config, "the model's config.json")->required();
  imp->add_option("--name", args->import.name,
                  "model name (default: the config's directory, or its file stem)");
  imp->add_option("--out", args->out,
                  "model file to write (default models/llm/<name>.json; written atomically)");
  imp->add_flag("--force", args->force, "replace an existing --out file");
  imp->add_option("--hardware", args->import.hardware,
                  "node file the default units are sized on (default hopper-8x400g)");
  imp->add_option("--weights", args->import.precision.weights,
                  "weight precision when the config gives none (or to override it)")
      ->check(CLI::IsMember({"fp8", "bf16", "fp4"}));
  imp->add_option("--kv", args->import.precision.kv, "KV cache dtype (configs rarely give it)")
      ->check(CLI::IsMember({"fp8", "bf16"}));
  imp->add_option(
      "--prefill-ep", args->import.prefill_ep,
      "GPUs per prefill deployment unit (default: the smallest that holds the weights with room for KV)");
  imp->add_option("--decode-ep", args->import.decode_ep,
                  "GPUs per decode deployment unit (default: likewise)");
  imp->add_option(
      "--kv-room-tokens", args->import.kv_room_tokens,
      "KV tokens each GPU must keep beside the weights for the default units (default: max context)");
  imp->callback([args, exit_code]() { *exit_code = finish(study::model_import(*args)); });
}

}  // namespace sim::cli
