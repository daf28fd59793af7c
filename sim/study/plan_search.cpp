#include "sim/study/plan_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace sim::study {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double number_or_inf(const nlohmann::json& j) {
  return j.is_number() ? j.get<double>() : kInf;
}

// The resource class that ran fullest (the results' bottleneck), for the reasons of a failed point; below
// kLatencyBound the run was not short of any resource, and a larger cluster alone will not help.
std::string fullest(const nlohmann::json& result) {
  if (!result.contains("bottleneck") || !result["bottleneck"].is_object()) return "";
  const auto& b = result["bottleneck"];
  if (!b.contains("resource") || !b["resource"].is_string() || !b.contains("utilization") ||
      !b["utilization"].is_number())
    return "";
  const double u = b["utilization"].get<double>();
  return fmt::format("; fullest: {} at {:.0f}%{}", b["resource"].get<std::string>(), 100 * u,
                     u < kLatencyBound ? " (latency-bound: no resource is short)" : "");
}

// One search of one choice, replayed over the known outcomes.
class ChoiceSearch {
 public:
  ChoiceSearch(const PlanSpace& s, int choice, const std::map<std::string, PlanOutcome>& known,
               PlanStep& step)
      : s_(s), choice_(choice), known_(known), step_(step) {}

  // Runs the search as far as the known outcomes allow. Returns the best point when it is done
  // (found = false when no size is feasible); nullopt while runs are needed (added to step.needed).
  std::optional<PlanBest> run() { return s_.goal == PlanGoal::kJctTimesSize ? unimodal() : monotone(); }

 private:
  // The points of size n; false when one has no outcome yet (they are then needed).
  bool probe(int n) {
    bool all = true;
    for (const auto& pd : plan_splits(n, s_.choices[choice_], s_)) {
      const PlanPoint p = plan_point(choice_, pd, s_);
      if (seen_.insert(p.name).second) step_.probed.push_back(p);
      if (known_.count(p.name) == 0) {
        step_.needed.push_back(p);
        all = false;
      }
    }
    return all;
  }

  // The best point of size n that meets the goal, by the choice's ranking value (nullopt: none).
  std::optional<PlanBest> best_of(int n) const {
    std::optional<PlanBest> best;
    for (const auto& pd : plan_splits(n, s_.choices[choice_], s_)) {
      const PlanPoint p = plan_point(choice_, pd, s_);
      const PlanOutcome& o = known_.at(p.name);
      if (!o.ok) continue;
      PlanBest b{choice_, true, p, plan_size(p, s_), 0, o.metric};
      b.objective = s_.goal == PlanGoal::kJctTimesSize ? o.metric * b.size : b.size;
      if (!best || b.objective < best->objective ||
          (b.objective == best->objective && b.metric < best->metric))
        best = b;
    }
    return best;
  }

  // The sizes of the space that have a split (a role's units of several nodes leave some sizes none: units of
  // 3 nodes per role split only multiples of 3 of at least 6), ascending.
  std::vector<int> sizes() const {
    std::vector<int> out;
    for (int n = s_.min_nodes; n <= s_.max_nodes; ++n)
      if (!plan_splits(n, s_.choices[choice_], s_).empty()) out.push_back(n);
    return out;
  }

  std::optional<PlanBest> monotone() {
    const std::vector<int> ns = sizes();
    if (ns.empty()) return PlanBest{choice_, false, {}, 0, kInf, kInf};
    // Indices into ns: lo infeasible (-1: below the space), hi feasible.
    int lo = -1, i = 0, hi = -1;
    while (true) {  // sizes min, 2 min, 4 min, ... max (those with a split) until one is feasible
      if (!probe(ns[i])) return std::nullopt;
      if (best_of(ns[i])) {
        hi = i;
        break;
      }
      lo = i;
      if (i + 1 >= static_cast<int>(ns.size())) return PlanBest{choice_, false, {}, 0, kInf, kInf};
      const auto next = std::lower_bound(ns.begin(), ns.end(), 2 * ns[i]);
      i = std::max(i + 1, std::min(static_cast<int>(ns.size()) - 1, static_cast<int>(next - ns.begin())));
    }
    while (hi - lo > 1) {  // bisection
      const int mid = lo + (hi - lo) / 2;
      if (!probe(ns[mid])) return std::nullopt;
      (best_of(ns[mid]) ? hi : lo) = mid;
    }
    return best_of(ns[hi]);
  }

  double value(int n) const {
    const auto b = best_of(n);
    return b ? b->objective : kInf;
  }

  std::optional<PlanBest> unimodal() {
    const std::vector<int> ns = sizes();
    int lo = 0, hi = static_cast<int>(ns.size()) - 1;  // indices into ns
    while (hi - lo > 2) {
      const int m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
      const bool a = probe(ns[m1]), b = probe(ns[m2]);
      if (!a || !b) return std::nullopt;
      if (value(ns[m1]) <= value(ns[m2])) {
        hi = m2;  // the minimum is not right of m2
      } else {
        lo = m1;  // nor left of m1
      }
    }
    bool all = true;
    for (int k = lo; k <= hi; ++k) all = probe(ns[k]) && all;
    if (!all) return std::nullopt;
    std::optional<PlanBest> best;
    for (int k = lo; k <= hi; ++k) {
      const auto b = best_of(ns[k]);
      if (b && (!best || b->objective < best->objective)) best = b;
    }
    return best ? best : PlanBest{choice_, false, {}, 0, kInf, kInf};
  }

  const PlanSpace& s_;
  const int choice_;
  const std::map<std::string, PlanOutcome>& known_;
  PlanStep& step_;
  std::set<std::string> seen_;
};

}  // namespace

std::vector<GridPoint> plan_splits(int n, const PlanChoice& c, const PlanSpace& s) {
  std::vector<GridPoint> all;
  for (int p = 1; p < n; ++p)
    if (p % c.unit_p == 0 && (n - p) % c.unit_d == 0) all.push_back({p, n - p});
  if (all.empty() || !s.prune || !c.has_range) return all;
  std::vector<GridPoint> in;
  for (const auto& g : all) {
    const double r = static_cast<double>(g.p) / g.d;
    if (r >= c.pd_min * (1 - 1e-12) && r <= c.pd_max * (1 + 1e-12)) in.push_back(g);
  }
  if (in.empty()) {  // the split nearest to the range, in log(P/D)
    auto off = [&](const GridPoint& g) {
      const double r = std::log(static_cast<double>(g.p) / g.d);
      return std::max({0.0, std::log(c.pd_min) - r, r - std::log(c.pd_max)});
    };
    in.push_back(*std::min_element(all.begin(), all.end(),
                                   [&](const GridPoint& a, const GridPoint& b) { return off(a) < off(b); }));
  }
  if (static_cast<int>(in.size()) <= s.max_splits) return in;
  std::vector<GridPoint> thin;  // max_splits of them, evenly spread, both ends included
  for (int k = 0; k < s.max_splits; ++k) {
    const size_t i =
        s.max_splits == 1
            ? in.size() / 2
            : static_cast<size_t>(std::lround(static_cast<double>(k) * (in.size() - 1) / (s.max_splits - 1)));
    if (thin.empty() || thin.back().p != in[i].p) thin.push_back(in[i]);
  }
  return thin;
}

PlanPoint plan_point(int choice, const GridPoint& pd, const PlanSpace& s) {
  return {choice, pd, fmt::format("n{}-p{}-d{}{}", pd.p + pd.d, pd.p, pd.d, s.choices[choice].suffix)};
}

double plan_size(const PlanPoint& p, const PlanSpace& s) {
  const PlanChoice& c = s.choices[p.choice];
  if (s.objective == PlanObjective::kCost) return c.price_per_hour(p.pd).value_or(kInf);
  return static_cast<double>(c.gpus(p.pd));
}

PlanOutcome plan_outcome(const nlohmann::json& result, PlanGoal goal, double jct_target_s) {
  PlanOutcome o;
  const nlohmann::json& s = result.at("summary");
  const std::string by = s.value("stopped_by", std::string("?"));
  const bool complete = result.value("complete", false);
  if (goal == PlanGoal::kSlo) {
    const auto& slo = s.at("slo");
    const double ttft = number_or_inf(slo.value("ttft_judged_s", nlohmann::json())),
                 tpot = number_or_inf(slo.value("tpot_judged_s", nlohmann::json()));
    const double bt = slo.at("ttft_s").get<double>(), bp = slo.at("tpot_s").get<double>();
    const std::string stat = slo.value("statistic", std::string("mean"));
    o.ok = s.value("meets_slo", false);
    o.metric = std::max(ttft / bt, tpot / bp);
    if (slo.value("mode", std::string("absolute")) == "relative") {
      // The share of judged turns that miss their own bounds, over the share the SLO allows to.
      const double att = s.value("slo_attainment", 0.0), target = slo.at("attainment").get<double>();
      const double ts = slo.at("ttft_scale").get<double>(), ps = slo.at("tpot_scale").get<double>();
      o.metric = target < 1 ? (1 - att) / (1 - target) : (att < 1 ? kInf : 0.0);
      if (by == "ttft_slo") {
        o.metric = std::max(o.metric, 1.0);
        o.why = fmt::format(
            "stopped by the TTFT rule at {:.0f} s (under {:g} of its window's turns within {:g}x their "
            "unloaded "
            "TTFT)",
            s.value("stopped_at_s", 0.0), target, ts);
      } else if (slo.value("turns_judged", 0) == 0) {
        o.why = "no turn judged (the run ended in its warm-up)";
      } else if (!o.ok) {
        o.why = fmt::format(
            "attainment {:.3f} < {:g} (TTFT within {:g}x unloaded: {:.1f}%, TPOT within {:g}x: {:.1f}%)", att,
            target, ts, 100 * number_or_inf(slo.value("ttft_met_share", nlohmann::json())), ps,
            100 * number_or_inf(slo.value("tpot_met_share", nlohmann::json())));
      }
    } else if (by == "ttft_slo") {
      o.metric = std::max(o.metric, 1.0);
      o.why = fmt::format("stopped by the TTFT rule at {:.0f} s (windowed TTFT over {:g} s)",
                          s.value("stopped_at_s", 0.0), bt);
    } else if (slo.value("turns_judged", 0) == 0) {
      o.why = "no turn judged (the run ended in its warm-up)";
    } else if (ttft > bt) {
      o.why = fmt::format("TTFT {} {:.3g} s > {:g} s", stat, ttft, bt);
    } else if (tpot > bp) {
      o.why = fmt::format("TPOT {} {:.3g} ms > {:g} ms", stat, 1e3 * tpot, 1e3 * bp);
    }
  } else {
    o.metric = complete ? s.at("jct_s").get<double>() : kInf;
    o.ok = complete && (goal == PlanGoal::kJctTimesSize || o.metric <= jct_target_s);
    if (!complete)
      o.why = fmt::format("incomplete (stopped by {} at {:.0f} s)", by, s.value("stopped_at_s", 0.0));
    else if (!o.ok)
      o.why = fmt::format("JCT {:.1f} s > {:g} s", o.metric, jct_target_s);
  }
  if (!o.ok) o.why += fullest(result);
  return o;
}

PlanStep plan_step(const PlanSpace& s, const std::map<std::string, PlanOutcome>& known) {
  PlanStep step;
  std::vector<std::optional<PlanBest>> results;
  results.reserve(s.choices.size());
  for (int c = 0; c < static_cast<int>(s.choices.size()); ++c)
    results.push_back(ChoiceSearch(s, c, known, step).run());
  if (!step.needed.empty()) return step;
  for (const auto& r : results) step.best.push_back(*r);
  for (int i = 0; i < static_cast<int>(step.best.size()); ++i) {
    const PlanBest& b = step.best[i];
    if (!b.found) continue;
    const PlanBest* cur = step.recommended < 0 ? nullptr : &step.best[step.recommended];
    if (!cur || b.objective < cur->objective || (b.objective == cur->objective && b.metric < cur->metric))
      step.recommended = i;
  }
  if (step.recommended >= 0) {
    const PlanBest& r = step.best[step.recommended];
    for (int n : {r.point.nodes() - 1, r.point.nodes()}) {
      if (n < s.min_nodes) continue;
      for (const auto& pd : plan_splits(n, s.choices[r.choice], s)) {
        const PlanPoint p = plan_point(r.choice, pd, s);
        const auto it = known.find(p.name);
        if (it != known.end() && !it->second.ok) step.rejected_neighbours.push_back(p.name);
      }
    }
  }
  return step;
}

std::vector<size_t> pareto_front(const std::vector<std::pair<double, double>>& xy) {
  std::vector<size_t> order(xy.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return xy[a] < xy[b]; });
  std::vector<size_t> front;
  double best_y = kInf;
  for (size_t i : order) {
    if (xy[i].second < best_y) {  // strictly better than every point of smaller or equal x seen
      front.push_back(i);
      best_y = xy[i].second;
    }
  }
  return front;
}

}  // namespace sim::study
