#include "sim/policy/dualpath/de_fetch.h"

#include "sim/core/check.h"

namespace sim::policy::dualpath {

double de_len(const RequestInfo& r) {
  return r.hit_tokens + r.miss_tokens + r.gen_tokens;
}

namespace {

double checked_len(const LenFn& len, const RequestInfo& r) {
  const double l = len(r);
  SIM_CHECK(l >= 0, "request {}: len(r) = {} < 0", r.id, l);
  return l;
}

// a is a better high-token choice than b: least tok, then lowest id.
bool fewer_tokens(const EngineLoad& a, const EngineLoad& b) {
  return a.tok < b.tok || (a.tok == b.tok && a.id < b.id);
}

// a is a better choice than b among the DEs under Z: least seq, then least tok, then lowest id.
bool fewer_requests(const EngineLoad& a, const EngineLoad& b) {
  return a.seq < b.seq || (a.seq == b.seq && fewer_tokens(a, b));
}

}  // namespace

std::vector<int> de_phase1(const std::vector<RequestInfo>& global_queue, std::vector<double>& group_tok,
                           const LenFn& len) {
  SIM_CHECK(global_queue.empty() || !group_tok.empty(), "{} requests and no DE group", global_queue.size());
  std::vector<int> out;
  out.reserve(global_queue.size());
  for (const RequestInfo& r : global_queue) {
    size_t best = 0;
    for (size_t g = 1; g < group_tok.size(); ++g)
      if (group_tok[g] < group_tok[best]) best = g;
    group_tok[best] += checked_len(len, r);
    out.push_back(static_cast<int>(best));
  }
  return out;
}

DeFetchResult de_phase2(const std::vector<RequestInfo>& private_queue, std::vector<EngineLoad>& des,
                        double kv_bytes_per_token, const LenFn& len) {
  SIM_CHECK(!des.empty(), "a DE group with no engine");
  SIM_CHECK(kv_bytes_per_token > 0, "kv_bytes_per_token {} <= 0", kv_bytes_per_token);
  std::vector<double> lens;
  lens.reserve(private_queue.size());
  for (const RequestInfo& r : private_queue) lens.push_back(checked_len(len, r));

  DeFetchResult res;
  // R: the prefix that fits the group's summed free HBM, as if it were one pool.
  double free_total = 0, tok_total = 0;
  for (const EngineLoad& e : des) {
    free_total += e.free_hbm;
    tok_total += e.tok;
  }
  double need_sum = 0, len_sum = 0;
  for (double l : lens) {
    if (need_sum + l * kv_bytes_per_token > free_total) break;
    need_sum += l * kv_bytes_per_token;
    len_sum += l;
    res.feasible++;
  }
  res.z = kZSlack * (len_sum + tok_total) / static_cast<double>(des.size());

  for (size_t q = 0; q < private_queue.size(); ++q) {
    const double l = lens[q];
    const double need = l * kv_bytes_per_token;
    int under = -1, over = -1;  // best DE with tok + len <= Z, and best above Z
    for (size_t i = 0; i < des.size(); ++i) {
      const EngineLoad& e = des[i];
      if (e.free_hbm < need) continue;
      if (e.tok + l <= res.z) {
        if (under < 0 || fewer_requests(e, des[under])) under = static_cast<int>(i);
      } else if (over < 0 || fewer_tokens(e, des[over])) {
        over = static_cast<int>(i);
      }
    }
    const int pick = under >= 0 ? under : over;
    if (pick < 0) {
      res.stop = DeStop::kNoHbm;
      return res;
    }
    EngineLoad& e = des[pick];
    e.seq += 1;
    e.tok += l;
    e.free_hbm -= need;
    res.assignments.push_back({static_cast<int>(q), e.id});
    res.taken++;
  }
  res.stop = DeStop::kQueueEmpty;
  return res;
}

}  // namespace sim::policy::dualpath
