#include "sim/metrics/request_log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace sim::metrics {

namespace {

constexpr const char* kColumns[] = {"agent",
                                    "turn",
                                    "issue_s",
                                    "read_start_s",
                                    "read_end_s",
                                    "kv_ready_s",
                                    "prefill_start_s",
                                    "first_token_s",
                                    "second_token_s",
                                    "done_s",
                                    "ttft_s",
                                    "tpot_s",
                                    "hit_tokens",
                                    "miss_tokens",
                                    "gen_tokens",
                                    "read_path",
                                    "pe",
                                    "pe_node",
                                    "de",
                                    "de_node",
                                    "pe_read_bytes",
                                    "de_read_bytes"};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A time or an optional figure: the shortest text that reads back as the same double; "" (CSV) or null
// (JSONL) when negative, i.e. not reached.
std::string optional(double v, RequestLog::Format f) {
  if (v < 0) return f == RequestLog::Format::kCsv ? "" : "null";
  return fmt::format("{}", v);
}

}  // namespace

StatusOr<RequestLog::Format> RequestLog::format_of(const std::string& path) {
  if (ends_with(path, ".csv")) return Format::kCsv;
  if (ends_with(path, ".jsonl")) return Format::kJsonl;
  return Status::error(fmt::format("\"{}\": expected a file name ending in .csv or .jsonl", path));
}

StatusOr<std::unique_ptr<RequestLog>> RequestLog::open(const std::string& path) {
  auto format = format_of(path);
  if (!format) return format.status();
  std::error_code ec;
  const std::filesystem::path p(path);
  if (std::filesystem::is_directory(p, ec))
    return Status::error(fmt::format("{} is a directory, expected a file", path));
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Status::error(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  std::unique_ptr<RequestLog> log(new RequestLog(path, tmp, *format, f));
  if (*format == Format::kCsv) {
    std::string header;
    for (const char* c : kColumns) header += (header.empty() ? "" : ",") + std::string(c);
    header += "\n";
    log->failed_ = std::fputs(header.c_str(), f) < 0;
  }
  return log;
}

RequestLog::RequestLog(std::string path, std::string tmp, Format format, std::FILE* f)
    : path_(std::move(path)), tmp_(std::move(tmp)), format_(format), f_(f) {}

RequestLog::~RequestLog() {
  if (f_ != nullptr) {
    std::fclose(f_);
    std::remove(tmp_.c_str());
  }
}

void RequestLog::write(const TurnRecord& r) {
  const Format f = format_;
  const std::string values[] = {std::to_string(r.agent),
                                std::to_string(r.turn),
                                optional(r.issue, f),
                                optional(r.read_start, f),
                                optional(r.read_end, f),
                                optional(r.kv_ready, f),
                                optional(r.prefill_start, f),
                                optional(r.first_token, f),
                                optional(r.second_token, f),
                                optional(r.done, f),
                                optional(r.ttft, f),
                                optional(r.tpot, f),
                                fmt::format("{}", r.hit),
                                fmt::format("{}", r.miss),
                                fmt::format("{}", r.gen),
                                f == Format::kCsv ? r.read_path : fmt::format("\"{}\"", r.read_path),
                                std::to_string(r.pe),
                                std::to_string(r.pe_node),
                                std::to_string(r.de),
                                std::to_string(r.de_node),
                                fmt::format("{}", r.pe_read_bytes),
                                fmt::format("{}", r.de_read_bytes)};
  static_assert(std::size(values) == std::size(kColumns));
  std::string line;
  line.reserve(256);
  for (size_t i = 0; i < std::size(values); ++i) {
    if (f == Format::kCsv) {
      if (i > 0) line += ',';
      line += values[i];
    } else {
      line += i == 0 ? "{\"" : ", \"";
      line += kColumns[i];
      line += "\": ";
      line += values[i];
    }
  }
  line += f == Format::kCsv ? "\n" : "}\n";
  if (std::fputs(line.c_str(), f_) < 0) failed_ = true;
  records_++;
}

std::string RequestLog::commit() {
  if (f_ == nullptr) return fmt::format("{}: already written", path_);
  const bool write_failed = failed_ || std::fflush(f_) != 0;
  const bool close_failed = std::fclose(f_) != 0;
  f_ = nullptr;
  if (write_failed || close_failed) {
    std::remove(tmp_.c_str());
    return fmt::format("write failed: {}", tmp_);
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    return fmt::format("cannot rename {} to {}", tmp_, path_);
  }
  return "";
}

}  // namespace sim::metrics
