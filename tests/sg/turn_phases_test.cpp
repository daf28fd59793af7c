// The phases of a turn, timed by SimGrid itself: one agent, two turns (the second reads the first's KV
// from storage) on 1P1D, run through sim::run::simulate. Before the run the test connects to
// SimGrid's static signals (Activity::on_completion, Engine::on_time_advance; see record_activities) and
// records every comm's source and destination hosts, size, start and finish; nothing is read from the
// simulator's own accounting. Each phase's time is then checked against a value computed by hand below
// from the fixture's numbers (tests/data/turn_phases/: hw.json, model.json, one_agent.jsonl,
// scenario.json), never by calling sim/cost.
//
// Compute is inferred from the gaps between comms (prefill = push start - PE load end, decode = D2H start
// - DE H2D end), so the checks hold whether compute is a sleep or a SimGrid execution on the GPU host;
// when executions are seen, they are also checked to fill exactly those gaps on the right GPU.
//
// ---- Hand computation (units: tokens, bytes, seconds, FLOPs) ----
// Platform (sim/platform/builder.cpp): network/model CM02, crosstraffic off, every link latency 0, so a
// lone comm runs at the bandwidth of the slowest link of its route. Routes (sim/platform/handles.h):
//   storage read  n0.storage -> n0.dram    SNIC in, DRAM                  10 GB/s (SNIC)
//   PE H2D        n0.g0.buf  -> n0.g0      DRAM, CNIC read, CNIC write    25 GB/s (CNIC)
//   push          n0.g0      -> n1.g0.buf  n0 CNIC read, n1 CNIC write, n1 DRAM   25 GB/s
//   DE H2D        n1.g0.buf  -> n1.g0      25 GB/s;   D2H n1.g0 -> n1.g0.buf 25 GB/s
//   persist       n1.dram    -> n1.storage DRAM, SNIC out                 10 GB/s
// DRAM is 10 TB/s, so comms that overlap (the DE H2D and the persist of the appended KV) share no
// bottleneck.
// Model: L = 10 layers, 1e5 KV bytes per token per layer -> kv = 1e6 B per token.
//   P = 1e10 active = total parameters, 2 B each -> weights 2e10 B on the decode GPU.
//   2 x heads x (qk + v) = 2 x 8 x 256 = 4096 attention FLOPs per (query, attended token) per layer.
// Workload: turn 0: hit 0, miss 990, gen 10; turn 1: hit 990 + 10 = 1000, miss 1000, gen 11.
// Policy: PE read path, Basic (no layerwise: load all, compute, push all), FIFO batches (one request),
//   persist_interval_s 0 (every persist write as soon as it is due).
//
// Prefill of a chunk of b new tokens over c cached ones (one GPU; a dense model: no experts):
//   L x [4096 x sum_{i=1..b} (c + i) / (F x kernels.prefill_attention)
//        + max(2 x P / L x b / (F x kernels.gemm), weights / L / (HBM x kernels.gemm_hbm))
//        + kernels.prefill_layer_overhead_s]
//   F x 0.5 = 5e13 FLOP/s for both; the weight read 2e9 B / 5e11 = 0.004 s per layer is below the
//   GEMM's FLOP time for these chunks; overhead 0.001 s.
//   turn 0: c 0, b 990: sum = 990 x 991 / 2 = 490,545
//     10 x (4096 x 490,545 / 5e13 + 2e9 x 990 / 5e13 + 0.001) = 10 x (4.01854464e-5 + 0.0396 + 0.001)
//     = 0.406401854464
//   turn 1: c 1000, b 1000: sum = 1000 x 1000 + 1000 x 1001 / 2 = 1,500,500
//     10 x (4096 x 1,500,500 / 5e13 + 2e9 x 1000 / 5e13 + 0.001) = 10 x (1.2292096e-4 + 0.04 + 0.001)
//     = 0.4112292096
// Decode step, batch 1, context C = hit + miss + 1 (the first token comes from the prefill):
//   attention = max(L x 4096 x C / (F x kernels.decode_attention = 2.5e13),
//                   L x 1e5 x C / (HBM 1e12 x kernels.attention_hbm 0.5 = 5e11))
//   GEMMs     = L x max(2 x P / L x 1 / 5e13 = 4e-5, weights 2e9 per layer / 5e11 = 0.004) = 0.04
//   tau = attention + GEMMs + kernels.decode_step_overhead_s 0.001; the DE takes gen - 1 steps.
//   turn 0: C = 991: attention max(1.6236e-6, 9.91e8 / 5e11 = 0.001982) = 0.001982
//     tau 0.042982, 9 steps: 0.386838
//   turn 1: C = 2001: attention max(3.2784e-6, 2.001e9 / 5e11 = 0.004002) = 0.004002
//     tau 0.045002, 10 steps: 0.45002
// Transfers (bytes / bandwidth):
//   turn 0: push 990 x 1e6 = 9.9e8 B / 2.5e10 = 0.0396; DE H2D 9.9e8 / 2.5e10 = 0.0396; persist of the
//     appended KV 9.9e8 / 1e10 = 0.099 (starts with the DE H2D); after decode, D2H of the 10 generated
//     tokens 1e7 / 2.5e10 = 4e-4, then their persist 1e7 / 1e10 = 1e-3.
//   turn 0 ends (turn 1 issued) at 0.406401854464 + 0.0396 + 0.0396 + 0.386838 = 0.872439854464
//   turn 1: storage read 1000 x 1e6 = 1e9 / 1e10 = 0.1; PE H2D 1e9 / 2.5e10 = 0.04; push (hit + miss)
//     2e9 / 2.5e10 = 0.08; DE H2D 2e9 / 2.5e10 = 0.08; persist of the appended KV 1e9 / 1e10 = 0.1 (with
//     the DE H2D); D2H of the 11 generated tokens 1.1e7 / 2.5e10 = 4.4e-4, then persist 1.1e7 / 1e10 =
//     1.1e-3.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <tuple>
#include <vector>
#include <xbt/config.hpp>

#include "sim/config/scenario.h"
#include "sim/run/simulate.h"

namespace {

namespace sg4 = simgrid::s4u;

constexpr double kTimeMargin = 1e-6;  // s: SimGrid's timing precision is far finer

struct CommRecord {
  std::string src, dst;
  double bytes = -1;
  double start = -1, end = -1;  // s
  double route_latency = -1;    // s, summed over the route's links
};

struct ExecRecord {
  std::string host;
  double start = -1, end = -1;
};

// Filled from SimGrid's signals during the run.
std::vector<CommRecord> g_comms;  // in completion order
std::vector<ExecRecord> g_execs;
struct ActionRecord {
  double cost, start, finish;
};
std::vector<ActionRecord> g_network_actions;  // finished network actions: size, start, finish
std::set<std::tuple<const void*, double, double>> g_seen_actions;
std::string g_network_model;
bool g_crosstraffic = true;

// SimGrid 3.32 has no public start signal for host-to-host comms (Comm::on_start is declared but not
// defined in libsimgrid 3.32; on_send / on_recv fire for mailbox comms only) and no size getter on a comm.
// So: Activity::on_completion gives each comm's hosts and its start and finish times; the comm's size is
// the cost of the network model's action that finished with the same start and finish times, read from
// the model's finished-action set on Engine::on_time_advance (fired after each step, before the kernel
// drains that set).
void record_activities() {
  sg4::Engine::on_time_advance_cb([](double) {
    for (auto* m : sg4::Engine::get_instance()->get_all_models()) {
      if (m->get_name().rfind("Network", 0) != 0) continue;
      for (const auto& a : *m->get_finished_action_set())
        if (g_seen_actions.emplace(&a, a.get_start_time(), a.get_finish_time()).second)
          g_network_actions.push_back({a.get_cost(), a.get_start_time(), a.get_finish_time()});
    }
  });
  // Fires when the waiting actor sees the activity end; get_finish_time() is when it ended.
  sg4::Activity::on_completion_cb([](const sg4::Activity& a) {
    if (const auto* c = dynamic_cast<const sg4::Comm*>(&a)) {
      if (g_comms.empty()) {
        g_network_model = simgrid::config::get_value<std::string>("network/model");
        g_crosstraffic = simgrid::config::get_value<bool>("network/crosstraffic");
      }
      CommRecord r;
      r.src = c->get_source()->get_name();
      r.dst = c->get_destination()->get_name();
      r.start = a.get_start_time();
      r.end = a.get_finish_time();
      std::vector<sg4::Link*> links;
      r.route_latency = 0;
      c->get_source()->route_to(c->get_destination(), links, &r.route_latency);
      g_comms.push_back(r);
    } else if (const auto* e = dynamic_cast<const sg4::Exec*>(&a)) {
      g_execs.push_back({e->get_host()->get_name(), a.get_start_time(), a.get_finish_time()});
    }
  });
}

// Gives each comm the size of the one finished network action with its start and finish times.
void attach_sizes() {
  for (auto& c : g_comms) {
    int n = 0;
    for (const auto& a : g_network_actions)
      if (a.start == c.start && a.finish == c.end) {
        c.bytes = a.cost;
        n++;
      }
    INFO("comm " << c.src << " -> " << c.dst << " [" << c.start << ", " << c.end << "]");
    REQUIRE(n == 1);
  }
}

// The one recorded comm from `src` to `dst` of `bytes` (LinkStats rounds sizes to whole bytes).
const CommRecord& comm(const std::string& src, const std::string& dst, double bytes) {
  const CommRecord* found = nullptr;
  int n = 0;
  for (const auto& c : g_comms)
    if (c.src == src && c.dst == dst && std::fabs(c.bytes - bytes) < 1) {
      found = &c;
      n++;
    }
  INFO("comm " << src << " -> " << dst << " of " << bytes << " B");
  REQUIRE(n == 1);
  return *found;
}

// A simulated time, within kTimeMargin.
Approx at(double seconds) {
  return Approx(seconds).epsilon(0).margin(kTimeMargin);
}

double duration(const CommRecord& c) {
  return c.end - c.start;
}

// ---- The fixture's numbers and the header's formulas (units: B, B/s, FLOP/s, s, tokens) ----
// hw.json
constexpr double kSnicBps = 10e9, kCnicBps = 25e9;
constexpr double kGpuFlops = 1e14, kHbmBps = 1e12;
// model.json
constexpr double kLayers = 10, kKvLayer = 1e5, kParams = 1e10, kWeightBytes = 2 * kParams;
constexpr double kKv = kLayers * kKvLayer;          // 1e6 B per token
constexpr double kPairFlops = 2 * 8 * (128 + 128);  // 2 x heads x (qk + v), per (query, token) per layer
constexpr double kPrefillFlops = kGpuFlops * 0.5;   // x kernels.prefill_attention (= kernels.gemm)
constexpr double kDecodeFlops = kGpuFlops * 0.25;   // x kernels.decode_attention
constexpr double kDecodeHbmBps = kHbmBps * 0.5;     // x kernels.attention_hbm (= kernels.gemm_hbm)
constexpr double kLayerOverhead = 0.001, kStepOverhead = 0.001;
// one_agent.jsonl: turn 0 appends 990 and generates 10; turn 1 appends 1000 and generates 11.
constexpr double kMiss0 = 990, kGen0 = 10, kHit1 = kMiss0 + kGen0, kMiss1 = 1000, kGen1 = 11;

// Prefill of b new tokens over c cached ones, one request on one GPU.
double prefill_s(double c, double b) {
  const double attended = c * b + b * (b + 1) / 2;  // sum over i = 1..b of (c + i)
  const double gemm =
      std::max(2 * kParams / kLayers * b / kPrefillFlops, kWeightBytes / kLayers / kDecodeHbmBps);
  return kLayers * (kPairFlops * attended / kPrefillFlops + gemm + kLayerOverhead);
}

// `steps` decode steps of a batch of one request whose context is `context` tokens.
double decode_s(double context, double steps) {
  const double attention =
      std::max(kLayers * kPairFlops * context / kDecodeFlops, kLayers * kKvLayer * context / kDecodeHbmBps);
  const double gemm =
      kLayers * std::max(2 * kParams / kLayers / kPrefillFlops, kWeightBytes / kLayers / kDecodeHbmBps);
  return steps * (attention + gemm + kStepOverhead);
}

std::string describe_comms() {
  std::string s;
  for (const auto& c : g_comms)
    s += c.src + " -> " + c.dst + " " + std::to_string(c.bytes) + " B [" + std::to_string(c.start) + ", " +
         std::to_string(c.end) + "]\n";
  return s;
}

}  // namespace

TEST_CASE(
    "Turn phases: two turns on 1P1D, the second with a storage hit -> each phase takes its hand-computed "
    "time",
    "[sg]") {
  record_activities();
  auto sc =
      sim::config::load_scenario(std::string(DPSIM_SOURCE_DIR) + "/tests/data/turn_phases/scenario.json", {});
  INFO((sc ? std::string() : sc.status().message()));
  REQUIRE(sc);
  auto res = sim::run::simulate(*sc);
  INFO((res ? std::string() : res.status().message()));
  REQUIRE(res);
  REQUIRE(res->json["complete"].get<bool>());
  REQUIRE(res->json["summary"]["turns_completed"].get<int64_t>() == 2);
  attach_sizes();

  INFO("comms recorded:\n" << describe_comms());
  // The network model the hand computation assumes.
  CHECK(g_network_model == "CM02");
  CHECK_FALSE(g_crosstraffic);
  for (const auto& c : g_comms) {
    INFO(c.src << " -> " << c.dst);
    CHECK(c.route_latency == 0);
    CHECK(c.end >= c.start);
  }

  // Every transfer of the run, and no other: 5 for turn 0 (no hit: no read, no PE load), 7 for turn 1.
  const auto& push0 = comm("n0.g0", "n1.g0.buf", kMiss0 * kKv);
  const auto& de_h2d0 = comm("n1.g0.buf", "n1.g0", kMiss0 * kKv);
  const auto& persist_append0 = comm("n1.dram", "n1.storage", kMiss0 * kKv);
  const auto& d2h0 = comm("n1.g0", "n1.g0.buf", kGen0 * kKv);
  const auto& persist_gen0 = comm("n1.dram", "n1.storage", kGen0 * kKv);
  const auto& read1 = comm("n0.storage", "n0.dram", kHit1 * kKv);
  const auto& pe_h2d1 = comm("n0.g0.buf", "n0.g0", kHit1 * kKv);
  const auto& push1 = comm("n0.g0", "n1.g0.buf", (kHit1 + kMiss1) * kKv);
  const auto& de_h2d1 = comm("n1.g0.buf", "n1.g0", (kHit1 + kMiss1) * kKv);
  const auto& persist_append1 = comm("n1.dram", "n1.storage", kMiss1 * kKv);
  const auto& d2h1 = comm("n1.g0", "n1.g0.buf", kGen1 * kKv);
  const auto& persist_gen1 = comm("n1.dram", "n1.storage", kGen1 * kKv);
  CHECK(g_comms.size() == 12);

  // Turn 0, issued at t = 0 with no hit: prefill, push, DE H2D (and persist of the appended KV), decode,
  // D2H and persist of the generated KV.
  CHECK(push0.start == at(prefill_s(0, kMiss0)));         // 0.406401854464
  CHECK(duration(push0) == at(kMiss0 * kKv / kCnicBps));  // 0.0396
  CHECK(de_h2d0.start == at(push0.end));
  CHECK(duration(de_h2d0) == at(kMiss0 * kKv / kCnicBps));  // 0.0396
  CHECK(persist_append0.start == at(push0.end));
  CHECK(duration(persist_append0) == at(kMiss0 * kKv / kSnicBps));         // 0.099
  CHECK(d2h0.start - de_h2d0.end == at(decode_s(kMiss0 + 1, kGen0 - 1)));  // 9 x 0.042982 = 0.386838
  CHECK(duration(d2h0) == at(kGen0 * kKv / kCnicBps));                     // 4e-4
  CHECK(persist_gen0.start == at(d2h0.end));
  CHECK(duration(persist_gen0) == at(kGen0 * kKv / kSnicBps));  // 1e-3

  // Turn 1, issued when turn 0's decode ends: every phase of a turn with a storage hit.
  CHECK(read1.start == at(d2h0.start));
  CHECK(read1.start == at(0.872439854464));  // the header's sum of turn 0's phases
  // storage read
  CHECK(duration(read1) == at(kHit1 * kKv / kSnicBps));  // 0.1
  // KV load to the PE GPU (H2D), right after the read
  CHECK(pe_h2d1.start == at(read1.end));
  CHECK(duration(pe_h2d1) == at(kHit1 * kKv / kCnicBps));  // 0.04
  // prefill compute: from the end of the load to the start of the push (Basic)
  CHECK(push1.start - pe_h2d1.end == at(prefill_s(kHit1, kMiss1)));  // 0.4112292096
  // push PE GPU -> DE buffer: the hit and the computed KV
  CHECK(duration(push1) == at((kHit1 + kMiss1) * kKv / kCnicBps));  // 0.08
  // H2D on the DE, right after the push
  CHECK(de_h2d1.start == at(push1.end));
  CHECK(duration(de_h2d1) == at((kHit1 + kMiss1) * kKv / kCnicBps));  // 0.08
  // decode: from the end of the DE H2D to the D2H of the generated KV
  CHECK(d2h1.start - de_h2d1.end == at(decode_s(kHit1 + kMiss1 + 1, kGen1 - 1)));  // 10 x 0.045002
  // persist: the appended KV from the DE buffer once the prompt KV is there; the generated KV, D2H then
  // to storage, once decoding ends
  CHECK(persist_append1.start == at(push1.end));
  CHECK(duration(persist_append1) == at(kMiss1 * kKv / kSnicBps));  // 0.1
  CHECK(duration(d2h1) == at(kGen1 * kKv / kCnicBps));              // 4.4e-4
  CHECK(persist_gen1.start == at(d2h1.end));
  CHECK(duration(persist_gen1) == at(kGen1 * kKv / kSnicBps));  // 1.1e-3

  // Compute as SimGrid executions, when the engine runs it so (prefill and decode may change separately):
  // every execution is on the GPU of a compute gap and inside it, and on a GPU that executes, the
  // executions of each gap span the whole gap. Sleeps leave g_execs empty.
  struct Gap {
    std::string host;
    double start, end;
  };
  const std::vector<Gap> gaps = {{"n0.g0", 0.0, push0.start},
                                 {"n1.g0", de_h2d0.end, d2h0.start},
                                 {"n0.g0", pe_h2d1.end, push1.start},
                                 {"n1.g0", de_h2d1.end, d2h1.start}};
  auto in_gap = [](const ExecRecord& x, const Gap& g) {
    return x.host == g.host && x.start >= g.start - kTimeMargin && x.end <= g.end + kTimeMargin;
  };
  for (const auto& x : g_execs) {
    INFO("execution on " << x.host << " [" << x.start << ", " << x.end << "]");
    CHECK(std::any_of(gaps.begin(), gaps.end(), [&](const Gap& g) { return in_gap(x, g); }));
  }
  for (const auto& g : gaps) {
    if (std::none_of(g_execs.begin(), g_execs.end(), [&](const ExecRecord& x) { return x.host == g.host; }))
      continue;
    double first = 1e300, last = -1;
    for (const auto& x : g_execs)
      if (in_gap(x, g)) {
        first = std::min(first, x.start);
        last = std::max(last, x.end);
      }
    INFO("compute gap on " << g.host << " [" << g.start << ", " << g.end << "]");
    CHECK(first == at(g.start));
    CHECK(last == at(g.end));
  }
}
