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
  // A plain name: it becomes the model's name and, without --out, models/llm/<name>.json.
  const CLI::Validator plain_name(
      [](std::string& v) -> std::string {
        if (v.empty()) return "expected a model name, got an empty one";
        if (v == "." || v == ".." || v.find_first_of("/\\") != std::string::npos)
          return "expected a plain name (no path: --out says where the file goes), got " + v;
        return "";
      },
      "NAME");
  imp->add_option("--name", args->import.name,
                  "model name (default: the config's directory, or its file stem)")
      ->check(plain_name);
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
  // The flags' own ranges (a model file's params.weight_shards is at most 100,000 GPUs); an absent flag is
  // the default, never a value of its range.
  imp->add_option(
         "--prefill-ep", args->import.prefill_ep,
         "GPUs per prefill deployment unit (default: the smallest that holds the weights with room for KV)")
      ->check(CLI::Range(1, 100000));
  imp->add_option("--decode-ep", args->import.decode_ep,
                  "GPUs per decode deployment unit (default: likewise)")
      ->check(CLI::Range(1, 100000));
  imp->add_option(
         "--kv-room-tokens", args->import.kv_room_tokens,
         "KV tokens each GPU must keep beside the weights for the default units (default: max context)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return !v.empty() && v[0] == '-' ? "expected a number of tokens >= 0, got " + v : "";
          },
          "TOKENS"));
  imp->callback([args, exit_code]() { *exit_code = finish(study::model_import(*args)); });
}

}  // namespace sim::cli
