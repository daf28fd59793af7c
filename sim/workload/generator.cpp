#include "sim/workload/generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "sim/core/check.h"

namespace sim::workload {

namespace {

using Vec5 = std::array<double, 5>;
using Mat5 = std::array<Vec5, 5>;

// Fixed spreads (lognormal sigmas). The paper gives no distribution (PAPER.md §8); these are dpsim's
// documented choices (traces/README.md).
constexpr double kSigmaTurns = 0.6;   // natural number of turns of a task
constexpr double kSigmaAppend = 1.0;  // per-turn tool output: `ls` is short, `cat file` is long
constexpr double kSigmaGen = 0.6;     // per-turn generated tool call
constexpr double kSigmaFirst = 0.3;   // first prompt: a fixed system prompt plus a varying task
// The fit uses at most this many trajectories (the first ones); larger sets reuse the fitted shape.
constexpr int kFitSample = 4000;
constexpr int kFitIterations = 40;
constexpr double kFitTolerance = 0.001;  // stop when every column is within 0.1%

// splitmix64 finaliser: decorrelates the per-trajectory stream seeds.
uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Platform-independent sampling: std::mt19937_64's output is fixed by the standard; the uniform and
// normal transforms are ours (Box-Muller), unlike std::normal_distribution's implementation-defined one.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in (0, 1), 53 bits.
  double uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double r = std::sqrt(-2.0 * std::log(uniform()));
    double angle = 6.283185307179586 * uniform();
    spare_ = r * std::sin(angle);
    has_spare_ = true;
    return r * std::cos(angle);
  }

 private:
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0;
};

// Mean-one lognormal factor.
double unit_lognormal(double sigma, double z) {
  return std::exp(sigma * z - 0.5 * sigma * sigma);
}

// All random numbers of one trajectory, independent of the shape, so that the fit sees common random
// numbers and a trajectory is the same whether it was cached for the fit or drawn afresh.
struct Draws {
  Draws(uint64_t seed, int index) : rng(mix64(seed ^ mix64(static_cast<uint64_t>(index)))) {
    z_turns = rng.normal();
    z_verbosity = rng.normal();
    z_first = rng.normal();
  }
  void ensure(size_t turns) {
    while (append_unit.size() < turns) {
      append_unit.push_back(unit_lognormal(kSigmaAppend, rng.normal()));
      gen_unit.push_back(unit_lognormal(kSigmaGen, rng.normal()));
    }
  }
  Rng rng;
  double z_turns = 0, z_verbosity = 0, z_first = 0;
  std::vector<double> append_unit, gen_unit;
};

int64_t round_at_least_1(double x) {
  return std::max<int64_t>(1, std::llround(std::min(x, 1e15)));
}

// One trajectory: a natural length in turns, a verbosity factor scaling its appends and gens, a heavy
// first prompt; truncated at MaxLen (the turn that would cross it is cut to fit, or dropped when not even
// its prompt plus one generated token fits).
Trajectory sample_trajectory(const DatasetTargets& target, const GeneratorShape& shape, Draws& d, int index) {
  const int64_t max_len = target.max_len;
  const int64_t natural =
      std::clamp<int64_t>(round_at_least_1(shape.median_turns * std::exp(kSigmaTurns * d.z_turns)), 1,
                          std::max<int64_t>(1, max_len / 2));
  const double verbosity = unit_lognormal(shape.sigma_verbosity, d.z_verbosity);
  const int64_t first =
      std::min(round_at_least_1(shape.first_mean * unit_lognormal(kSigmaFirst, d.z_first)), max_len - 1);
  d.ensure(static_cast<size_t>(natural));
  Trajectory t;
  t.id = "t" + std::to_string(index);
  int64_t context = 0;
  for (int64_t i = 0; i < natural; ++i) {
    int64_t append = i == 0 ? first : round_at_least_1(verbosity * shape.append_mean * d.append_unit[i]);
    int64_t gen = round_at_least_1(verbosity * shape.gen_mean * d.gen_unit[i]);
    if (context + append + 1 > max_len) break;
    bool last = context + append + gen >= max_len;
    if (last) gen = max_len - context - append;
    t.turns.push_back(Turn{static_cast<int32_t>(append), static_cast<int32_t>(gen), 0.0});
    context += append + gen;
    if (last) break;
  }
  return t;
}

Vec5 columns_of(const TraceAverages& a, Weighting w) {
  if (w == Weighting::kPerTurn)
    return {a.turn_turns, a.turn_append, a.turn_gen, a.turn_total, a.turn_context};
  return {a.turns, a.append, a.gen, a.total, a.context};
}
Vec5 columns_of(const DatasetTargets& t) {
  return {t.turns, t.append, t.gen, t.total, t.context};
}

// log(achieved / target) per column.
Vec5 residuals(const TraceAverages& a, const DatasetTargets& t, Weighting w) {
  Vec5 got = columns_of(a, w), want = columns_of(t), r{};
  for (int k = 0; k < 5; ++k) r[k] = std::log(std::max(got[k], 1e-9) / want[k]);
  return r;
}

double max_abs(const Vec5& r) {
  double m = 0;
  for (double x : r) m = std::max(m, std::fabs(x));
  return m;
}

double norm2(const Vec5& r) {
  double s = 0;
  for (double x : r) s += x * x;
  return s;
}

Vec5 to_params(const GeneratorShape& s) {
  return {std::log(s.median_turns), std::log(s.append_mean), std::log(s.gen_mean), std::log(s.first_mean),
          std::log(s.sigma_verbosity)};
}
GeneratorShape from_params(const Vec5& p) {
  GeneratorShape s;
  s.median_turns = std::min(std::exp(p[0]), 2000.0);  // bounds the draws a diverging fit could cache
  s.append_mean = std::exp(p[1]);
  s.gen_mean = std::exp(p[2]);
  s.first_mean = std::exp(p[3]);
  s.sigma_verbosity = std::clamp(std::exp(p[4]), 0.01, 2.0);
  return s;
}

// Solves J x = b (5x5) by Gaussian elimination with partial pivoting; false when singular.
bool solve5(Mat5 j, Vec5 b, Vec5& x) {
  for (int c = 0; c < 5; ++c) {
    int piv = c;
    for (int r = c + 1; r < 5; ++r)
      if (std::fabs(j[r][c]) > std::fabs(j[piv][c])) piv = r;
    if (std::fabs(j[piv][c]) < 1e-12) return false;
    std::swap(j[c], j[piv]);
    std::swap(b[c], b[piv]);
    for (int r = c + 1; r < 5; ++r) {
      double f = j[r][c] / j[c][c];
      for (int k = c; k < 5; ++k) j[r][k] -= f * j[c][k];
      b[r] -= f * b[c];
    }
  }
  for (int c = 4; c >= 0; --c) {
    double s = b[c];
    for (int k = c + 1; k < 5; ++k) s -= j[c][k] * x[k];
    x[c] = s / j[c][c];
  }
  return true;
}

class Fitter {
 public:
  Fitter(const DatasetTargets& target, Weighting w, int n, uint64_t seed) : target_(target), weighting_(w) {
    for (int i = 0; i < n; ++i) draws_.emplace_back(seed, i);
  }
  Vec5 eval(const GeneratorShape& s) {
    std::vector<Trajectory> ts;
    ts.reserve(draws_.size());
    for (size_t i = 0; i < draws_.size(); ++i)
      ts.push_back(sample_trajectory(target_, s, draws_[i], static_cast<int>(i)));
    return residuals(compute_averages(ts), target_, weighting_);
  }
  // Levenberg-Marquardt in log-parameter space with a forward-difference Jacobian: robust where the
  // truncation at MaxLen makes the averages only piecewise smooth.
  GeneratorShape fit(GeneratorShape start) {
    Vec5 p = to_params(start);
    Vec5 r = eval(start);
    double lambda = 1e-3;
    for (int it = 0; it < kFitIterations && max_abs(r) > kFitTolerance; ++it) {
      Mat5 jac{};
      constexpr double kStep = 0.02;
      for (int k = 0; k < 5; ++k) {
        Vec5 q = p;
        q[k] += kStep;
        Vec5 rq = eval(from_params(q));
        for (int m = 0; m < 5; ++m) jac[m][k] = (rq[m] - r[m]) / kStep;
      }
      Mat5 jtj{};
      Vec5 jtr{};
      for (int a = 0; a < 5; ++a) {
        for (int b = 0; b < 5; ++b)
          for (int m = 0; m < 5; ++m) jtj[a][b] += jac[m][a] * jac[m][b];
        for (int m = 0; m < 5; ++m) jtr[a] -= jac[m][a] * r[m];
      }
      bool improved = false;
      for (int tries = 0; tries < 8 && !improved; ++tries) {
        Mat5 damped = jtj;
        for (int a = 0; a < 5; ++a) damped[a][a] *= 1 + lambda;
        Vec5 dx{};
        if (solve5(damped, jtr, dx)) {
          double longest = max_abs(dx);
          Vec5 q = p;
          for (int k = 0; k < 5; ++k) q[k] += (longest > 0.5 ? 0.5 / longest : 1.0) * dx[k];
          Vec5 rq = eval(from_params(q));
          if (norm2(rq) < norm2(r)) {
            p = to_params(from_params(q));
            r = rq;
            improved = true;
          }
        }
        lambda = improved ? std::max(lambda / 10, 1e-7) : lambda * 10;
      }
      if (!improved) break;
    }
    return from_params(p);
  }

 private:
  const DatasetTargets& target_;
  Weighting weighting_;
  std::vector<Draws> draws_;
};

}  // namespace

const std::vector<DatasetTargets>& dataset_targets() {
  // DualPath Table 2 (§7.2): 500 trajectories each; MaxLen 32K/48K/64K = 32768/49152/65536 tokens.
  static const std::vector<DatasetTargets> kTable = {
      {"32k", 32768, 60, 608, 148, 28639, 17183},
      {"48k", 49152, 106, 474, 172, 42607, 25120},
      {"64k", 65536, 157, 429, 176, 55958, 32721},
  };
  return kTable;
}

const DatasetTargets* find_dataset(const std::string& name) {
  for (const auto& t : dataset_targets())
    if (t.name == name) return &t;
  return nullptr;
}

std::string dataset_names() {
  std::string s;
  for (const auto& t : dataset_targets()) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

TrajectoryColumns trajectory_columns(const Trajectory& t) {
  TrajectoryColumns c;
  c.turns = static_cast<int>(t.turns.size());
  if (t.turns.empty()) return c;
  int64_t appended = 0, generated = 0;
  double prompt_sum = 0;
  for (const Turn& turn : t.turns) {
    prompt_sum += static_cast<double>(appended + generated + turn.append);
    appended += turn.append;
    generated += turn.gen;
  }
  c.append = static_cast<double>(appended) / c.turns;
  c.gen = static_cast<double>(generated) / c.turns;
  c.total = appended + generated;
  c.context = prompt_sum / c.turns;
  return c;
}

TraceAverages compute_averages(const std::vector<Trajectory>& ts) {
  TraceAverages a;
  if (ts.empty()) return a;
  double hit_sum = 0, append_sum = 0, gen_sum = 0, turns_sq = 0, turns_total = 0;
  for (const Trajectory& t : ts) {
    TrajectoryColumns c = trajectory_columns(t);
    a.turns += c.turns;
    a.append += c.append;
    a.gen += c.gen;
    a.total += static_cast<double>(c.total);
    a.context += c.context;
    a.max_total = std::max(a.max_total, c.total);
    int64_t context = 0;
    for (const Turn& turn : t.turns) {
      hit_sum += static_cast<double>(context);
      append_sum += turn.append;
      gen_sum += turn.gen;
      context += turn.append + turn.gen;
    }
    a.turn_count += c.turns;
    turns_sq += static_cast<double>(c.turns) * c.turns;
    turns_total += static_cast<double>(c.turns) * static_cast<double>(c.total);
  }
  double n = static_cast<double>(ts.size());
  a.trajectories = static_cast<int>(ts.size());
  a.turns /= n;
  a.append /= n;
  a.gen /= n;
  a.total /= n;
  a.context /= n;
  if (a.turn_count > 0) {
    double turns = static_cast<double>(a.turn_count);
    a.turn_append = append_sum / turns;
    a.turn_gen = gen_sum / turns;
    a.turn_hit = hit_sum / turns;
    a.turn_context = a.turn_hit + a.turn_append;
    a.turn_turns = turns_sq / turns;
    a.turn_total = turns_total / turns;
  }
  return a;
}

std::vector<Trajectory> generate_with_shape(const DatasetTargets& target, const GeneratorShape& shape,
                                            int trajectories, uint64_t seed) {
  std::vector<Trajectory> out;
  out.reserve(static_cast<size_t>(std::max(0, trajectories)));
  for (int i = 0; i < trajectories; ++i) {
    Draws d(seed, i);
    out.push_back(sample_trajectory(target, shape, d, i));
  }
  return out;
}

GeneratedDataset generate_dataset_fitted(const std::string& dataset, int trajectories, uint64_t seed,
                                         Weighting weighting) {
  const DatasetTargets* target = find_dataset(dataset);
  SIM_CHECK(target != nullptr, "unknown dataset '{}' (expected one of {})", dataset, dataset_names());
  SIM_CHECK(trajectories >= 1, "trajectories = {}", trajectories);
  // Start: natural turns a little above the target (truncation removes some), appends split between
  // the first prompt and the rest, and Context ~ (Total + first prompt) / 2 for linear growth.
  GeneratorShape start;
  start.median_turns = target->turns;
  start.append_mean = 0.6 * target->append;
  start.gen_mean = target->gen;
  start.first_mean = std::max(0.05 * target->max_len, 2 * target->context - target->total);
  start.sigma_verbosity = 0.6;
  Fitter fitter(*target, weighting, std::min(trajectories, kFitSample), seed);
  GeneratedDataset g;
  g.shape = fitter.fit(start);
  g.trajectories = generate_with_shape(*target, g.shape, trajectories, seed);
  g.achieved = compute_averages(g.trajectories);
  Vec5 got = columns_of(g.achieved, weighting), want = columns_of(*target);
  for (int k = 0; k < 5; ++k) g.max_rel_error = std::max(g.max_rel_error, std::fabs(got[k] / want[k] - 1));
  return g;
}

std::vector<Trajectory> generate_dataset(const std::string& dataset, int trajectories, uint64_t seed) {
  return generate_dataset_fitted(dataset, trajectories, seed, Weighting::kPerTrajectory).trajectories;
}

}  // namespace sim::workload
