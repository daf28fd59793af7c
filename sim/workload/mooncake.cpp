#include "sim/workload/mooncake.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "sim/config/json_util.h"

namespace sim::workload {

namespace {

struct MooncakeRow {
  int64_t timestamp_ms = 0;
  int64_t input = 0;
  int64_t output = 0;
  std::vector<int64_t> ids;
  int64_t line = 0;

  size_t full_blocks() const { return static_cast<size_t>(input / kMooncakeBlockTokens); }
};

// What the reader knows about one block id.
struct Block {
  int64_t pred = -1;       // the id before it (-1: it comes first)
  size_t line = 0;         // first line it appears on
  bool full = false;       // appears as a full block somewhere
  int fanout = 0;          // distinct full blocks that follow it
  bool persisted = false;  // (arrival-order pass) held by an earlier request
  int latest_parent = -1;  // (arrival-order pass) latest eligible request whose last full block it is
};

std::string position(int64_t pred) {
  return pred < 0 ? "first" : fmt::format("after block {}", pred);
}

Status parse_mooncake_line(std::string_view line, const std::string& where, MooncakeRow& out) {
  nlohmann::json j;
  SIM_RETURN_IF_ERROR(parse_json_line(line, where, &j));
  if (!j.is_object()) {
    return Status::error(fmt::format(
        "{}: expected a JSON object {{\"timestamp\": ..., \"input_length\": ..., \"output_length\": ..., "
        "\"hash_ids\": [...]}}, got {}",
        where, show_json(j)));
  }
  config::JsonReader r(j, where, "");
  out.timestamp_ms = r.integer("timestamp", std::nullopt, 0);
  out.input = r.integer("input_length", std::nullopt, 1, kMaxTraceTokens);
  out.output = r.integer("output_length", std::nullopt, 1, kMaxTraceTokens);
  const nlohmann::json* ids = r.raw("hash_ids");
  if (r.ok() && (ids == nullptr || !ids->is_array())) r.fail("hash_ids", "an array of block ids", ids);
  SIM_RETURN_IF_ERROR(r.finish());
  return read_block_ids(*ids, out.input, kMooncakeBlockTokens, where, &out.ids);
}

// Records the blocks of request `r` (line `line_no`): checks prefix consistency and counts, for every
// block, the distinct full blocks that follow it.
Status record_blocks(const MooncakeRow& r, size_t line_no, const std::string& where,
                     std::unordered_map<int64_t, Block>& blocks) {
  for (size_t k = 0; k < r.ids.size(); ++k) {
    int64_t pred = k == 0 ? -1 : r.ids[k - 1];
    auto [it, inserted] = blocks.try_emplace(r.ids[k]);
    Block& b = it->second;
    if (inserted) {
      b.pred = pred;
      b.line = line_no;
    } else if (b.pred != pred) {
      return Status::error(fmt::format(
          "{}: hash_ids[{}]: expected block {} {} (as on line {}; an id names a block and its whole "
          "prefix), got it {}",
          where, k, r.ids[k], position(b.pred), b.line, position(pred)));
    }
    if (k < r.full_blocks() && !b.full) {
      b.full = true;
      if (pred >= 0) ++blocks[pred].fanout;
    }
  }
  return Status::ok();
}

// Arrival times in seconds for `raw` taken in `order` (sorted by timestamp), spreading shared
// timestamps when `spread` (see mooncake.h).
std::vector<double> arrivals(const std::vector<MooncakeRow>& raw, const std::vector<size_t>& order,
                             bool spread) {
  size_t n = order.size();
  int64_t first = raw[order.front()].timestamp_ms;
  int64_t last = raw[order.back()].timestamp_ms;
  size_t distinct = 1;
  for (size_t i = 1; i < n; ++i) distinct += raw[order[i]].timestamp_ms != raw[order[i - 1]].timestamp_ms;
  double mean_gap_ms =
      distinct > 1 ? static_cast<double>(last - first) / static_cast<double>(distinct - 1) : 0;
  std::vector<double> out(n);
  for (size_t i = 0; i < n;) {
    int64_t t = raw[order[i]].timestamp_ms;
    size_t j = i;
    while (j < n && raw[order[j]].timestamp_ms == t) ++j;
    double gap_ms = j < n ? static_cast<double>(raw[order[j]].timestamp_ms - t) : mean_gap_ms;
    if (!spread) gap_ms = 0;
    double size = static_cast<double>(j - i);
    for (size_t k = i; k < j; ++k) {
      double offset_ms = gap_ms * static_cast<double>(k - i) / size;
      out[k] = (static_cast<double>(t - first) + offset_ms) / 1000.0;
    }
    i = j;
  }
  return out;
}

}  // namespace

StatusOr<RequestTrace> parse_mooncake(const std::string& text, const std::string& name,
                                      const MooncakeOptions& options) {
  if (options.shared_fanout < 2) {
    return Status::error(
        fmt::format("{}: shared_fanout: expected an integer >= 2, got {}", name, options.shared_fanout));
  }
  if (text.empty()) return Status::error(fmt::format("{}: empty file: expected one request per line", name));

  std::vector<MooncakeRow> raw;
  std::unordered_map<int64_t, Block> blocks;
  TextLines lines(text);
  std::string_view line;
  while (lines.next(&line)) {
    std::string where = fmt::format("{}:{}", name, lines.line_no());
    SIM_RETURN_IF_ERROR(check_trace_line(line, where, "request"));
    MooncakeRow r;
    SIM_RETURN_IF_ERROR(parse_mooncake_line(line, where, r));
    SIM_RETURN_IF_ERROR(record_blocks(r, lines.line_no(), where, blocks));
    r.line = static_cast<int64_t>(lines.line_no());
    raw.push_back(std::move(r));
  }
  if (raw.size() > static_cast<size_t>(INT32_MAX)) {
    return Status::error(fmt::format("{}: too many requests ({})", name, raw.size()));
  }

  // Arrival order: by timestamp, ties in line order.
  std::vector<size_t> order(raw.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return raw[a].timestamp_ms < raw[b].timestamp_ms; });
  std::vector<double> arrival = arrivals(raw, order, options.spread_buckets);

  RequestTrace out;
  out.source = name;
  out.requests.reserve(raw.size());
  std::vector<int> session_size;
  for (size_t i = 0; i < order.size(); ++i) {
    const MooncakeRow& r = raw[order[i]];
    // Hit: the longest persisted prefix of the blocks. Parent: the latest eligible earlier request
    // whose last full block is one of ours (by prefix consistency its full blocks are then our prefix).
    size_t persisted = 0;
    int parent = -1;
    for (size_t k = 0; k < r.ids.size(); ++k) {
      const Block& b = blocks.at(r.ids[k]);
      if (persisted == k && b.persisted) ++persisted;
      parent = std::max(parent, b.latest_parent);
    }
    TraceRequest q;
    q.arrival_s = arrival[i];
    q.input_tokens = r.input;
    q.output_tokens = r.output;
    q.line = r.line;
    q.hit_tokens = std::min(r.input, static_cast<int64_t>(persisted) * kMooncakeBlockTokens);
    if (parent >= 0) {
      q.session = out.requests[static_cast<size_t>(parent)].session;
    } else {
      q.session = static_cast<int>(session_size.size());
      session_size.push_back(0);
    }
    q.turn = session_size[static_cast<size_t>(q.session)]++;
    out.requests.push_back(q);

    for (int64_t id : r.ids) blocks.at(id).persisted = true;
    size_t full = r.full_blocks();
    if (full > 0) {
      Block& last_full = blocks.at(r.ids[full - 1]);
      if (last_full.fanout < options.shared_fanout) last_full.latest_parent = static_cast<int>(i);
    }
  }
  out.sessions = static_cast<int>(session_size.size());
  out.multi_turn_sessions =
      static_cast<int>(std::count_if(session_size.begin(), session_size.end(), [](int s) { return s > 1; }));
  return out;
}

StatusOr<RequestTrace> read_mooncake(const std::string& path, const MooncakeOptions& options) {
  StatusOr<std::string> text = config::read_text_file(path, "a Mooncake JSONL trace");
  if (!text) return text.status();
  return parse_mooncake(*text, path, options);
}

}  // namespace sim::workload
