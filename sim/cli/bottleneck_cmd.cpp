// `dpsim bottleneck HARDWARE [--decode-hw DECODE_HW] [--de-buffer dram|hbm] [--json] [--p P --d D]
// [--model MODEL [--prefill-ep-gpus N] [--decode-ep-gpus N] [--max-nodes N]]`: the analytic bottleneck-free
// P/D range of DualPath §4.2 for one hardware file, or one per role, and with a model the splits of whole
// deployment units inside it (sim/study/bottleneck_report.h).
#include <memory>

#include "sim/cli/commands.h"
#include "sim/study/bottleneck_report.h"

namespace sim::cli {

void add_bottleneck_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<study::BottleneckSpec>();
  CLI::App* cmd = app.add_subcommand(
      "bottleneck",
      "Analytic bottleneck-free P/D range (DualPath §4.2, inequalities (1)-(9)) of a hardware file, or of "
      "one per role");
  cmd->add_option("hardware", args->hardware,
                  "hardware JSON path, or a name under models/hardware/ (e.g. hopper-8x400g); with "
                  "--decode-hw, the prefill nodes'")
      ->required();
  cmd->add_option(
      "--decode-hw", args->decode_hw,
      "the decode nodes' hardware file (path or name), as the scenario field hardware_decode: the "
      "per-role inequalities of sim/README.md");
  cmd->add_option("--de-buffer", args->de_buffer,
                  "where the DE buffer is: dram (the paper's, inequalities (1)-(9)) or hbm (GPUDirect into "
                  "the DE GPU's HBM, (H1)-(H7) of sim/README.md); as the scenario field cluster.de_buffer")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the result as JSON on stdout");
  CLI::Option* p =
      cmd->add_option("--p", args->p, "prefill nodes P: also print the ideal link loads at P, D");
  CLI::Option* d = cmd->add_option("--d", args->d, "decode nodes D (with --p)");
  p->needs(d);
  d->needs(p);
  cmd->add_option("--model", args->model,
                  "a model file (path, or a name under models/llm/, e.g. ds660b): also list the P:D splits "
                  "made of whole deployment units of the model that lie in the range");
  cmd->add_option("--prefill-ep-gpus", args->prefill_ep_gpus,
                  "GPUs per prefill unit, as the scenario field cluster.prefill_ep_gpus (default: the "
                  "model's; 0 = one unit spanning the role)");
  cmd->add_option("--decode-ep-gpus", args->decode_ep_gpus,
                  "GPUs per decode unit, as cluster.decode_ep_gpus (default: the model's)");
  cmd->add_option("--max-nodes", args->max_nodes, "with --model: list splits of at most this many nodes")
      ->capture_default_str();
  cmd->callback([args, exit_code, p]() {
    args->have_point = p->count() > 0;
    *exit_code = finish(study::bottleneck_report(*args));
  });
}

}  // namespace sim::cli
