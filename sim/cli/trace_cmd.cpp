// `dpsim trace gen --dataset 64k [--trajectories 500] [--seed 1] [--weighting trajectory|turn] --out FILE`
// and `dpsim trace stats FILE [--dataset 64k] [--format native|mooncake|azure|alibaba] [--shared-fanout K]`:
// a synthetic trajectory set shaped like DualPath Table 2, and the statistics of a trace file
// (sim/study/trace_report.h).
#include <memory>

#include "sim/cli/commands.h"
#include "sim/study/trace_report.h"

namespace sim::cli {

void add_trace_command(CLI::App& app, int* exit_code) {
  CLI::App* trace =
      app.add_subcommand("trace", "generate or inspect agent trajectory files (traces/README.md)");
  trace->require_subcommand(1);

  auto gen_args = std::make_shared<study::TraceGenSpec>();
  CLI::App* gen = trace->add_subcommand("gen", "generate a synthetic set shaped like DualPath Table 2");
  gen->add_option("--dataset", gen_args->dataset, "Table 2 dataset: 32k, 48k or 64k")->required();
  gen->add_option("--trajectories", gen_args->trajectories, "number of trajectories (default 500)");
  gen->add_option("--seed", gen_args->seed, "random seed (default 1)");
  gen->add_option("--weighting", gen_args->weighting,
                  "which averages match Table 2: trajectory (default) or turn (traces/README.md)");
  gen->add_option("--out", gen_args->out, "output JSONL file (written atomically)")->required();
  gen->callback([gen_args, exit_code]() { *exit_code = finish(study::trace_gen(*gen_args)); });

  auto stats_args = std::make_shared<study::TraceStatsSpec>();
  CLI::App* stats = trace->add_subcommand("stats", "averages and percentiles of a trace file");
  stats
      ->add_option("file", stats_args->file,
                   "trace file (native JSONL, Mooncake JSONL, Azure CSV or Alibaba JSONL)")
      ->required();
  stats->add_option("--format", stats_args->format,
                    "native (default), mooncake, azure or alibaba (traces/README.md)");
  stats->add_option("--dataset", stats_args->dataset,
                    "native only: compare with this Table 2 row (32k, 48k, 64k)");
  CLI::Option* fanout =
      stats->add_option("--shared-fanout", stats_args->shared_fanout,
                        "mooncake only: successors that make a block shared (default 16; traces/README.md)");
  stats->callback([stats_args, fanout, exit_code]() {
    stats_args->shared_fanout_given = fanout->count() > 0;
    *exit_code = finish(study::trace_stats(*stats_args));
  });
}

}  // namespace sim::cli
