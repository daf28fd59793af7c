#include "sim/workload/azure.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <vector>

#include "sim/config/json_util.h"

namespace sim::workload {

namespace {

constexpr const char* kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";

// A calendar time as whole seconds since 1970-01-01 00:00:00 plus nanoseconds.
struct Instant {
  int64_t s = 0;
  int64_t ns = 0;
  bool operator<(const Instant& o) const { return s != o.s ? s < o.s : ns < o.ns; }
};

struct Row {
  Instant t;
  int64_t context = 0;
  int64_t generated = 0;
  int64_t line = 0;
};

std::string quoted(std::string_view field) {
  std::string s = nlohmann::json(std::string(field)).dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

bool is_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

// Days from 1970-01-01 to y-m-d (proleptic Gregorian). REQUIRES: a valid date, y >= 1.
int64_t days_since_epoch(int64_t y, int64_t m, int64_t d) {
  auto leap_years_up_to = [](int64_t year) { return year / 4 - year / 100 + year / 400; };
  static const int kDaysBeforeMonth[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  int64_t days = 365 * (y - 1970) + leap_years_up_to(y - 1) - leap_years_up_to(1969);
  days += kDaysBeforeMonth[m - 1] + (m > 2 && is_leap(y) ? 1 : 0) + (d - 1);
  return days;
}

// The digits s[pos, pos + len) as a number, or -1 when one is not a digit.
int64_t digits(std::string_view s, size_t pos, size_t len) {
  int64_t v = 0;
  for (size_t k = pos; k < pos + len; ++k) {
    if (s[k] < '0' || s[k] > '9') return -1;
    v = v * 10 + (s[k] - '0');
  }
  return v;
}

// Parses "YYYY-MM-DD HH:MM:SS[.f{1,9}]".
std::optional<Instant> parse_time(std::string_view s) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  int64_t y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
  int64_t h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) {
    return std::nullopt;
  }
  static const int kMonthDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > kMonthDays[mo - 1] + (mo == 2 && is_leap(y) ? 1 : 0)) return std::nullopt;
  Instant t;
  t.s = days_since_epoch(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
  if (s.size() > 19) {
    size_t len = s.size() - 20;
    if (s[19] != '.' || len < 1 || len > 9) return std::nullopt;
    int64_t f = digits(s, 20, len);
    if (f < 0) return std::nullopt;
    for (size_t k = len; k < 9; ++k) f *= 10;
    t.ns = f;
  }
  return t;
}

// Parses a token count: digits only, in [1, kMaxTraceTokens]; -1 when it is not one.
int64_t parse_tokens(std::string_view s) {
  if (s.empty() || s.size() > 12) return -1;
  int64_t v = digits(s, 0, s.size());
  return v < 1 || v > kMaxTraceTokens ? -1 : v;
}

Status parse_row(std::string_view line, const std::string& where, Row& out) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    fields.push_back(
        line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (fields.size() != 3) {
    return Status::error(
        fmt::format("{}: expected 3 comma-separated fields ({}), got {}", where, kHeader, fields.size()));
  }
  std::optional<Instant> t = parse_time(fields[0]);
  if (!t) {
    return Status::error(fmt::format(
        "{}: TIMESTAMP: expected a date and time YYYY-MM-DD HH:MM:SS[.fraction of 1-9 digits], got {}", where,
        quoted(fields[0])));
  }
  out.t = *t;
  const char* names[2] = {"ContextTokens", "GeneratedTokens"};
  int64_t* values[2] = {&out.context, &out.generated};
  for (int k = 0; k < 2; ++k) {
    *values[k] = parse_tokens(fields[static_cast<size_t>(k) + 1]);
    if (*values[k] < 0) {
      return Status::error(fmt::format("{}: {}: expected an integer in [1, {}], got {}", where, names[k],
                                       kMaxTraceTokens, quoted(fields[static_cast<size_t>(k) + 1])));
    }
  }
  return Status::ok();
}

}  // namespace

StatusOr<RequestTrace> parse_azure(const std::string& text, const std::string& name) {
  if (text.empty()) {
    return Status::error(
        fmt::format("{}: empty file: expected the header {} and one request per line", name, kHeader));
  }
  TextLines lines(text);
  std::string_view line;
  std::vector<Row> rows;
  while (lines.next(&line)) {
    std::string where = fmt::format("{}:{}", name, lines.line_no());
    SIM_RETURN_IF_ERROR(check_trace_line(line, where, "request"));
    if (lines.line_no() == 1) {
      if (line != kHeader) {
        return Status::error(fmt::format("{}: header: expected {}, got {}", where, kHeader, quoted(line)));
      }
      continue;
    }
    Row row;
    SIM_RETURN_IF_ERROR(parse_row(line, where, row));
    row.line = static_cast<int64_t>(lines.line_no());
    rows.push_back(row);
  }
  if (rows.empty()) return Status::error(fmt::format("{}: no requests after the header", name));
  if (rows.size() > static_cast<size_t>(INT32_MAX)) {
    return Status::error(fmt::format("{}: too many requests ({})", name, rows.size()));
  }

  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a].t < rows[b].t; });
  const Instant first = rows[order.front()].t;
  RequestTrace out;
  out.source = name;
  out.requests.reserve(rows.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Row& r = rows[order[i]];
    TraceRequest q;
    q.arrival_s = static_cast<double>(r.t.s - first.s) + static_cast<double>(r.t.ns - first.ns) * 1e-9;
    q.session = static_cast<int>(i);
    q.turn = 0;
    q.input_tokens = r.context;
    q.hit_tokens = 0;
    q.output_tokens = r.generated;
    q.line = r.line;
    out.requests.push_back(q);
  }
  out.sessions = static_cast<int>(rows.size());
  out.multi_turn_sessions = 0;
  return out;
}

StatusOr<RequestTrace> read_azure(const std::string& path) {
  StatusOr<std::string> text = config::read_text_file(path, "an Azure LLM inference CSV trace");
  if (!text) return text.status();
  return parse_azure(*text, path);
}

}  // namespace sim::workload
