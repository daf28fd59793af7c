// `dpsim bottleneck HARDWARE [--decode-hw DECODE_HW] [--de-buffer dram|hbm] [--json] [--p P --d D]`: the
// analytic bottleneck-free P/D range of DualPath §4.2 for one hardware file, or one per role
// (sim/study/bottleneck_report.h).
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
  cmd->callback([args, exit_code, p]() {
    args->have_point = p->count() > 0;
    *exit_code = finish(study::bottleneck_report(*args), "");
  });
}

}  // namespace sim::cli
