#include "sim/study/trace_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/workload/generator.h"
#include "sim/workload/mooncake.h"
#include "sim/workload/request_trace.h"
#include "sim/workload/trajectory.h"

namespace sim::study {

namespace wl = sim::workload;

namespace {

std::string diff_pct(double got, double want) {
  return fmt::format("{:+.1f}%", 100.0 * (got / want - 1));
}

// Nearest-rank percentile of sorted `v` (REQUIRES: !v.empty()).
double percentile(const std::vector<double>& v, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::string table_row(const char* name, std::vector<double> v, const wl::DatasetTargets* target,
                      double target_value) {
  std::sort(v.begin(), v.end());
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  std::string row = fmt::format("  {:<14}{:>10.1f}{:>10.0f}{:>10.0f}{:>10.0f}{:>10.0f}", name, mean,
                                percentile(v, 0.5), percentile(v, 0.9), percentile(v, 0.99), v.back());
  if (target != nullptr) row += fmt::format("{:>10.0f}{:>9}", target_value, diff_pct(mean, target_value));
  return row + "\n";
}

}  // namespace

StatusOr<Outcome> trace_gen(const TraceGenSpec& a) {
  const wl::DatasetTargets* target = wl::find_dataset(a.dataset);
  if (target == nullptr) {
    return Status::error(
        fmt::format("--dataset: expected one of {}, got '{}'", wl::dataset_names(), a.dataset));
  }
  if (a.trajectories < 1 || a.trajectories > 1000000) {
    return Status::error(
        fmt::format("--trajectories: expected an integer in [1, 1000000], got {}", a.trajectories));
  }
  if (a.weighting != "trajectory" && a.weighting != "turn") {
    return Status::error(fmt::format("--weighting: expected one of trajectory, turn, got '{}'", a.weighting));
  }
  if (a.out.empty()) return Status::error("--out: expected a file path");
  wl::Weighting w = a.weighting == "turn" ? wl::Weighting::kPerTurn : wl::Weighting::kPerTrajectory;
  wl::GeneratedDataset g = wl::generate_dataset_fitted(a.dataset, a.trajectories, a.seed, w);
  Status s = wl::write_trajectories(a.out, g.trajectories);
  if (!s) return s;

  const wl::TraceAverages& x = g.achieved;
  std::string out =
      fmt::format("wrote {}: {} trajectories, {} turns (dataset {}, seed {}, {}-weighted fit)\n", a.out,
                  x.trajectories, x.turn_count, a.dataset, a.seed, a.weighting);
  out += fmt::format("  {:<10}{:>10}{:>16}{:>9}{:>16}\n", "column", "Table 2", "per-trajectory", "diff",
                     "turn-weighted");
  const struct {
    const char* name;
    double want, per_traj, per_turn;
  } rows[] = {{"Turns", target->turns, x.turns, x.turn_turns},
              {"Append", target->append, x.append, x.turn_append},
              {"Gen", target->gen, x.gen, x.turn_gen},
              {"Total", target->total, x.total, x.turn_total},
              {"Context", target->context, x.context, x.turn_context}};
  for (const auto& r : rows) {
    double fitted = w == wl::Weighting::kPerTurn ? r.per_turn : r.per_traj;
    out += fmt::format("  {:<10}{:>10.0f}{:>16.1f}{:>9}{:>16.1f}\n", r.name, r.want, r.per_traj,
                       diff_pct(fitted, r.want), r.per_turn);
  }
  out += fmt::format("  (diff: the {}-weighted column vs Table 2)\n", a.weighting);
  out +=
      fmt::format("  hit tokens per turn (turn-weighted): {:.0f}; largest trajectory total {} (MaxLen {})\n",
                  x.turn_hit, x.max_total, target->max_len);
  out += fmt::format(
      "  fitted shape: median natural turns {:.1f}, append mean {:.1f}, gen mean {:.1f}, first prompt mean "
      "{:.0f}, verbosity sigma {:.3f}\n",
      g.shape.median_turns, g.shape.append_mean, g.shape.gen_mean, g.shape.first_mean,
      g.shape.sigma_verbosity);
  return Outcome{out};
}

namespace {

// Statistics of a request trace read into a RequestTrace (mooncake, azure or alibaba).
StatusOr<Outcome> request_trace_stats(const TraceStatsSpec& a) {
  StatusOr<wl::RequestTrace> t = Status::error("unreachable");
  if (a.format == "mooncake") {
    wl::MooncakeOptions o;
    o.shared_fanout = a.shared_fanout;
    t = wl::read_mooncake(a.file, o);
  } else {
    t = wl::read_request_trace(a.format, a.file);
  }
  if (!t) return Status::error(t.status().message());
  std::vector<double> input, output;
  std::vector<int> session_turns(static_cast<size_t>(t->sessions), 0);
  int64_t follow_hit = 0, follow_input = 0;
  for (const wl::TraceRequest& r : t->requests) {
    input.push_back(static_cast<double>(r.input_tokens));
    output.push_back(static_cast<double>(r.output_tokens));
    ++session_turns[static_cast<size_t>(r.session)];
    if (r.turn > 0) follow_hit += r.hit_tokens, follow_input += r.input_tokens;
  }
  int64_t multi_turns = 0;
  int longest = 0;
  for (int n : session_turns) {
    if (n > 1) multi_turns += n;
    longest = std::max(longest, n);
  }
  double span = t->requests.back().arrival_s - t->requests.front().arrival_s;
  std::string out = fmt::format("{}: {} trace, {} requests, arrivals spanning {:.3f} s ({:.2f} requests/s)\n",
                                a.file, a.format, t->requests.size(), span,
                                span > 0 ? static_cast<double>(t->requests.size() - 1) / span : 0.0);
  out += fmt::format("sessions rebuilt {}, multi-turn {}", t->sessions, t->multi_turn_sessions);
  if (t->multi_turn_sessions > 0) {
    out += fmt::format(" (mean {:.2f} turns, longest {})",
                       static_cast<double>(multi_turns) / t->multi_turn_sessions, longest);
  }
  out += "\n";
  // Mooncake's hits come from a cluster-wide cache, Alibaba's from a cache per session (traces/README.md).
  out += fmt::format("token-weighted prefix hit with an infinite cache{}: {:.1f}%",
                     a.format == "alibaba" ? " per session" : "", 100 * wl::token_weighted_hit(*t));
  if (follow_input > 0) {
    out += fmt::format(" (follow-up turns: {:.1f}%)",
                       100.0 * static_cast<double>(follow_hit) / static_cast<double>(follow_input));
  }
  out += "\n";
  out += fmt::format("per request\n  {:<14}{:>10}{:>10}{:>10}{:>10}{:>10}\n", "", "mean", "p50", "p90", "p99",
                     "max");
  out += table_row("input", input, nullptr, 0);
  out += table_row("output", output, nullptr, 0);
  return Outcome{out};
}

}  // namespace

StatusOr<Outcome> trace_stats(const TraceStatsSpec& a) {
  if (a.format != "native" && a.format != "mooncake" && a.format != "azure" && a.format != "alibaba") {
    return Status::error(
        fmt::format("--format: expected one of native, mooncake, azure, alibaba, got '{}'", a.format));
  }
  if (a.format != "native" && !a.dataset.empty()) {
    return Status::error(
        fmt::format("--dataset: only with --format native (Table 2 rows describe agent trajectories)"));
  }
  if (a.format != "mooncake" && a.shared_fanout_given) {
    return Status::error("--shared-fanout: only with --format mooncake");
  }
  if (a.format != "native") return request_trace_stats(a);
  const wl::DatasetTargets* target = nullptr;
  if (!a.dataset.empty()) {
    target = wl::find_dataset(a.dataset);
    if (target == nullptr) {
      return Status::error(
          fmt::format("--dataset: expected one of {}, got '{}'", wl::dataset_names(), a.dataset));
    }
  }
  StatusOr<std::vector<wl::Trajectory>> ts = wl::read_trajectories(a.file);
  if (!ts) return Status::error(ts.status().message());
  std::vector<double> turns, append, gen, total, context, t_append, t_gen, t_hit;
  for (const wl::Trajectory& t : *ts) {
    wl::TrajectoryColumns c = wl::trajectory_columns(t);
    turns.push_back(c.turns);
    append.push_back(c.append);
    gen.push_back(c.gen);
    total.push_back(static_cast<double>(c.total));
    context.push_back(c.context);
    int64_t hit = 0;
    for (const wl::Turn& turn : t.turns) {
      t_append.push_back(turn.append);
      t_gen.push_back(turn.gen);
      t_hit.push_back(static_cast<double>(hit));
      hit += static_cast<int64_t>(turn.append) + turn.gen;
    }
  }
  std::string out = fmt::format("{}: {} trajectories, {} turns\n", a.file, ts->size(), t_append.size());
  out += fmt::format("per trajectory (each trajectory once; Table 2's reading, see traces/README.md)\n");
  out += fmt::format("  {:<14}{:>10}{:>10}{:>10}{:>10}{:>10}", "", "mean", "p50", "p90", "p99", "max");
  out += target ? fmt::format("{:>10}{:>9}\n", "Table 2", "diff") : "\n";
  out += table_row("turns", turns, target, target ? target->turns : 0);
  out += table_row("append/turn", append, target, target ? target->append : 0);
  out += table_row("gen/turn", gen, target, target ? target->gen : 0);
  out += table_row("total", total, target, target ? target->total : 0);
  out += table_row("context/turn", context, target, target ? target->context : 0);
  out += fmt::format("per turn (every turn once: the load a replay issues)\n");
  out += table_row("append (miss)", t_append, nullptr, 0);
  out += table_row("gen", t_gen, nullptr, 0);
  out += table_row("hit", t_hit, nullptr, 0);
  if (target != nullptr) {
    double max_total = total.empty() ? 0 : *std::max_element(total.begin(), total.end());
    out += fmt::format("largest total {:.0f} vs MaxLen {}: {}\n", max_total, target->max_len,
                       max_total <= target->max_len ? "within" : "EXCEEDS");
  }
  return Outcome{out};
}

}  // namespace sim::study
