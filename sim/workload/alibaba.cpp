#include "sim/workload/alibaba.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "sim/config/json_util.h"

namespace sim::workload {

namespace {

constexpr int64_t kNoParent = -1;

struct AlibabaRow {
  int64_t chat_id = 0;
  int64_t parent_chat_id = kNoParent;
  double timestamp_s = 0;
  int64_t input = 0;
  int64_t output = 0;
  std::vector<int64_t> ids;
  int64_t line = 0;
  size_t root = 0;  // index (line order) of the session's first request
};

// parent_chat_id: missing, null or -1 mean no parent; otherwise an integer >= 0 (1e3 reads as 1000).
void read_parent(config::JsonReader& r, int64_t& out) {
  out = kNoParent;
  const nlohmann::json* p = r.raw("parent_chat_id");
  if (p == nullptr || p->is_null()) return;
  const char* expected = "-1 or null (no parent) or the chat_id of an earlier line (an integer >= 0)";
  if (p->is_number_unsigned() && p->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    r.fail("parent_chat_id", expected, p);
  } else if (p->is_number_integer()) {
    out = p->get<int64_t>();
  } else if (p->is_number_float() && std::fabs(p->get<double>()) < 9e15 &&
             p->get<double>() == std::floor(p->get<double>())) {
    out = static_cast<int64_t>(p->get<double>());
  } else {
    r.fail("parent_chat_id", expected, p);
    return;
  }
  if (out < kNoParent) r.fail("parent_chat_id", expected, p);
}

Status parse_alibaba_line(std::string_view line, const std::string& where, AlibabaRow& out) {
  nlohmann::json j;
  SIM_RETURN_IF_ERROR(parse_json_line(line, where, &j));
  if (!j.is_object()) {
    return Status::error(fmt::format(
        "{}: expected a JSON object {{\"chat_id\": ..., \"parent_chat_id\": ..., \"timestamp\": ..., "
        "\"input_length\": ..., \"output_length\": ..., \"hash_ids\": [...]}}, got {}",
        where, show_json(j)));
  }
  config::JsonReader r(j, where, "");
  out.chat_id = r.integer("chat_id", std::nullopt, 0);
  read_parent(r, out.parent_chat_id);
  out.timestamp_s = r.number("timestamp", std::nullopt, 0);
  out.input = r.integer("input_length", std::nullopt, 1, kMaxTraceTokens);
  out.output = r.integer("output_length", std::nullopt, 1, kMaxTraceTokens);
  r.string("type", "");     // text | search | image | file: not used
  r.integer("turn", 0, 0);  // the reader numbers turns itself
  const nlohmann::json* ids = r.raw("hash_ids");
  if (r.ok() && (ids == nullptr || !ids->is_array())) r.fail("hash_ids", "an array of block ids", ids);
  SIM_RETURN_IF_ERROR(r.finish());
  return read_block_ids(*ids, out.input, kAlibabaBlockTokens, where, &out.ids);
}

// Links every request to its parent and its session's first request. Parents come on earlier lines, so
// chains cannot loop.
Status link_parents(const std::string& name, std::vector<AlibabaRow>& raw,
                    const std::unordered_map<int64_t, size_t>& index) {
  for (size_t i = 0; i < raw.size(); ++i) {
    AlibabaRow& r = raw[i];
    r.root = i;
    if (r.parent_chat_id == kNoParent) continue;
    const std::string where = fmt::format("{}:{}", name, r.line);
    auto it = index.find(r.parent_chat_id);
    if (it == index.end()) {
      return Status::error(
          fmt::format("{}: parent_chat_id: {} is not the chat_id of any line", where, r.parent_chat_id));
    }
    if (it->second == i) {
      return Status::error(
          fmt::format("{}: parent_chat_id: {} is the request's own chat_id", where, r.parent_chat_id));
    }
    const AlibabaRow& p = raw[it->second];
    if (it->second > i) {
      return Status::error(fmt::format(
          "{}: parent_chat_id: {} is the chat_id of line {}, a later line (expected a parent on an "
          "earlier line)",
          where, r.parent_chat_id, p.line));
    }
    if (r.timestamp_s < p.timestamp_s) {
      return Status::error(fmt::format("{}: timestamp: expected >= {} (its parent's, line {}), got {}", where,
                                       p.timestamp_s, p.line, r.timestamp_s));
    }
    r.root = p.root;
  }
  return Status::ok();
}

// The sessions' prompt blocks as a trie: one root per session, a child per (node, block id). A path from
// a root spells a prefix of hash_ids that one of the session's requests sent.
class SessionBlocks {
 public:
  int64_t add_root() { return next_++; }
  // Blocks of `ids` that are a prefix of an earlier request's (from `root`); then adds `ids`.
  size_t match_and_add(int64_t root, const std::vector<int64_t>& ids) {
    int64_t node = root;
    size_t matched = 0;
    for (; matched < ids.size(); ++matched) {
      auto it = child_.find(Edge{node, ids[matched]});
      if (it == child_.end()) break;
      node = it->second;
    }
    for (size_t k = matched; k < ids.size(); ++k) {
      node = child_.emplace(Edge{node, ids[k]}, next_).first->second;
      ++next_;
    }
    return matched;
  }

 private:
  struct Edge {
    int64_t node, id;
    bool operator==(const Edge& o) const { return node == o.node && id == o.id; }
  };
  struct EdgeHash {
    size_t operator()(const Edge& e) const {
      return std::hash<uint64_t>()(static_cast<uint64_t>(e.node) * 0x9E3779B97F4A7C15ull ^
                                   static_cast<uint64_t>(e.id));
    }
  };
  std::unordered_map<Edge, int64_t, EdgeHash> child_;
  int64_t next_ = 0;
};

}  // namespace

StatusOr<RequestTrace> parse_alibaba(const std::string& text, const std::string& name) {
  if (text.empty()) return Status::error(fmt::format("{}: empty file: expected one request per line", name));

  std::vector<AlibabaRow> raw;
  std::unordered_map<int64_t, size_t> index;  // chat_id -> its request (line order)
  TextLines lines(text);
  std::string_view line;
  while (lines.next(&line)) {
    std::string where = fmt::format("{}:{}", name, lines.line_no());
    SIM_RETURN_IF_ERROR(check_trace_line(line, where, "request"));
    AlibabaRow r;
    SIM_RETURN_IF_ERROR(parse_alibaba_line(line, where, r));
    r.line = static_cast<int64_t>(lines.line_no());
    auto [it, inserted] = index.emplace(r.chat_id, raw.size());
    if (!inserted) {
      return Status::error(fmt::format("{}: chat_id: duplicate {} (first on line {})", where, r.chat_id,
                                       raw[it->second].line));
    }
    raw.push_back(std::move(r));
  }
  if (raw.size() > static_cast<size_t>(INT32_MAX)) {
    return Status::error(fmt::format("{}: too many requests ({})", name, raw.size()));
  }
  SIM_RETURN_IF_ERROR(link_parents(name, raw, index));

  // Arrival order: by timestamp, ties in line order. A parent is on an earlier line and not later in
  // time, so every request comes after its parent and its session's first request.
  std::vector<size_t> order(raw.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return raw[a].timestamp_s < raw[b].timestamp_s; });
  const double first = raw[order.front()].timestamp_s;

  RequestTrace out;
  out.source = name;
  out.requests.reserve(raw.size());
  std::vector<int> session_of(raw.size(), -1);  // by the index of a session's first request
  std::vector<int64_t> session_root;            // trie root per session
  std::vector<int> session_size;
  SessionBlocks blocks;
  for (size_t i : order) {
    const AlibabaRow& r = raw[i];
    if (session_of[r.root] < 0) {
      session_of[r.root] = static_cast<int>(session_size.size());
      session_root.push_back(blocks.add_root());
      session_size.push_back(0);
    }
    const int s = session_of[r.root];
    const size_t matched = blocks.match_and_add(session_root[static_cast<size_t>(s)], r.ids);
    TraceRequest q;
    q.arrival_s = r.timestamp_s - first;
    q.session = s;
    q.turn = session_size[static_cast<size_t>(s)]++;
    q.input_tokens = r.input;
    q.hit_tokens = std::min(r.input, static_cast<int64_t>(matched) * kAlibabaBlockTokens);
    q.output_tokens = r.output;
    q.line = r.line;
    out.requests.push_back(q);
  }
  out.sessions = static_cast<int>(session_size.size());
  out.multi_turn_sessions =
      static_cast<int>(std::count_if(session_size.begin(), session_size.end(), [](int n) { return n > 1; }));
  return out;
}

StatusOr<RequestTrace> read_alibaba(const std::string& path) {
  StatusOr<std::string> text = config::read_text_file(path, "an Alibaba JSONL trace");
  if (!text) return text.status();
  return parse_alibaba(*text, path);
}

}  // namespace sim::workload
