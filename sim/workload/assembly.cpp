#include "sim/workload/assembly.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "sim/workload/generator.h"
#include "sim/workload/request_trace.h"
#include "sim/workload/scaling.h"

namespace sim::workload {

namespace {

// Trace replay: each request's hit tokens come from the trace (capped so at least one token is
// computed), miss = input - hit, gen = output tokens; sessions and turns as the reader rebuilt them.
void replay_sessions(const RequestTrace& t, Workload& w) {
  w.replay.assign(t.sessions, {});
  for (const auto& q : t.requests) {
    ReplayTurn r;
    r.arrival_s = q.arrival_s;
    r.hit = static_cast<double>(std::min(q.hit_tokens, q.input_tokens - 1));
    r.miss = static_cast<double>(q.input_tokens) - r.hit;
    r.gen = static_cast<double>(std::max<int64_t>(1, q.output_tokens));
    w.replay[q.session].push_back(r);
    w.totals.turns++;
    w.totals.hit_tokens += static_cast<int64_t>(r.hit);
    w.totals.miss_tokens += static_cast<int64_t>(r.miss);
    w.totals.gen_tokens += static_cast<int64_t>(r.gen);
  }
  w.replay.erase(std::remove_if(w.replay.begin(), w.replay.end(), [](const auto& s) { return s.empty(); }),
                 w.replay.end());
  w.totals.agents = static_cast<int64_t>(w.replay.size());
}

// A trace reader's error (which names the trace file and line), prefixed with the scenario and the field.
Status trace_error(const config::ScenarioConfig& sc, const Status& s) {
  return Status::error(fmt::format("{}: workload.trace: {}", sc.file, s.message()));
}

// A turn whose prompt + generated tokens exceed the model's context window is an input error.
Status context_error(const config::ScenarioConfig& sc, const std::string& where, int64_t tokens) {
  return Status::error(fmt::format(
      "{}: workload.trace: {}: {} tokens (prompt + generated) exceed the model's max_context_tokens {} ({}); "
      "workload.over_context = \"drop\" leaves such turns out",
      sc.file, where, tokens, sc.model.max_context, sc.model_file));
}

// Replay: requests whose input + output exceed the model's context are an error, or dropped
// (workload.over_context); returns how many were dropped.
StatusOr<int64_t> fit_requests(const config::ScenarioConfig& sc, RequestTrace& t) {
  const int64_t max = sc.model.max_context;
  auto over = [max](const TraceRequest& q) { return q.input_tokens + q.output_tokens > max; };
  if (sc.workload.over_context == "error") {
    for (const auto& q : t.requests)
      if (over(q))
        return context_error(sc, fmt::format("{}:{}", t.source, q.line), q.input_tokens + q.output_tokens);
    return int64_t{0};
  }
  const size_t before = t.requests.size();
  t.requests.erase(std::remove_if(t.requests.begin(), t.requests.end(), over), t.requests.end());
  return static_cast<int64_t>(before - t.requests.size());
}

// Agents: the context only grows, so the first turn that ends beyond the model's context is an error, or
// the agent's trajectory ends before it (workload.over_context); returns the turns dropped. An agent whose
// first turn does not fit is an error either way.
StatusOr<int64_t> fit_agents(const config::ScenarioConfig& sc, std::vector<Agent>& agents) {
  const int64_t max = sc.model.max_context;
  int64_t dropped = 0;
  for (auto& a : agents) {
    int64_t context = 0;
    for (int k = 0; k < a.num_turns; ++k) {
      const Turn t = a.turn(k);
      context += static_cast<int64_t>(t.append) + t.gen;
      if (context <= max) continue;
      if (sc.workload.over_context == "drop" && k > 0) {
        dropped += a.num_turns - k;
        a.num_turns = k;
        break;
      }
      const std::string source = sc.workload.trace.empty()
                                     ? fmt::format("the generated {} dataset", sc.workload.generator.dataset)
                                     : sc.workload.trace;
      const int turn = k - (a.synthetic_append > 0 ? 1 : 0);
      return context_error(sc, fmt::format("{}: trajectory \"{}\", turn {}", source, a.source->id, turn),
                           context);
    }
  }
  return dropped;
}

}  // namespace

StatusOr<Workload> build_workload(const config::ScenarioConfig& sc) {
  Workload w;
  const auto& wc = sc.workload;
  if (wc.trace_format != "native") {
    auto t = read_request_trace(wc.trace_format, wc.trace);
    if (!t) return t.status();
    auto dropped = fit_requests(sc, *t);
    if (!dropped) return dropped.status();
    w.dropped_turns = *dropped;
    replay_sessions(*t, w);
    return w;
  }
  if (!wc.trace.empty()) {
    auto t = read_trajectories(wc.trace);
    if (!t) return trace_error(sc, t.status());
    w.trajectories = std::move(*t);
  } else {
    w.trajectories = generate_dataset(wc.generator.dataset, wc.generator.trajectories, wc.generator.seed);
  }
  if (wc.append_scale != 1.0 || wc.gen_scale != 1.0) {
    // MaxLen: the generated dataset's (Table 2), or the trace file's longest trajectory.
    const int64_t max_len =
        wc.trace.empty() ? find_dataset(wc.generator.dataset)->max_len : max_total_tokens(w.trajectories);
    w.trajectories = scale_trajectories(w.trajectories, wc.append_scale, wc.gen_scale, max_len);
  }
  w.agents = build_offline_agents(w.trajectories, wc.agents, wc.max_turns, kDefaultSyntheticFirstRoundTokens,
                                  sc.seed);
  auto dropped = fit_agents(sc, w.agents);
  if (!dropped) return dropped.status();
  w.dropped_turns = *dropped;
  w.totals = workload_totals(w.agents);
  return w;
}

}  // namespace sim::workload
