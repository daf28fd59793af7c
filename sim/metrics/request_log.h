// RequestLog: outputs.requests, one record per completed turn (scenarios/README.md, "Per-turn records").
// Records are streamed as turns complete into a temporary file beside the target, so memory stays bounded
// whatever the run's length; commit() renames it onto the target when the run has ended. A log that is not
// committed (the run failed) removes its temporary file.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "sim/core/status.h"

namespace sim::metrics {

// One turn, as the engines saw it. Times are simulated seconds, -1 = not reached (no storage read when
// hit = 0; no second token when gen = 1).
struct TurnRecord {
  int agent = 0, turn = 0;
  double issue = -1;          // the turn was submitted
  double read_start = -1;     // its first storage read began
  double read_end = -1;       // its last storage read ended
  double kv_ready = -1;       // its hit KV was in a buffer (reads done)
  double prefill_start = -1;  // its first prefill pass began
  double first_token = -1, second_token = -1, done = -1;
  double ttft = 0, tpot = -1;         // as in the summary (engine/recorder.h); tpot -1: a one-token turn
  double hit = 0, miss = 0, gen = 0;  // tokens
  const char* read_path = "none";     // pe | de | split | free (Oracle) | none (no hit)
  int pe = 0, pe_node = 0, de = 0, de_node = 0;
  double pe_read_bytes = 0, de_read_bytes = 0;  // storage bytes read through each side's SNIC
};

class RequestLog {
 public:
  enum class Format { kCsv, kJsonl };

  // The format of `path` from its extension (.csv or .jsonl), or an error saying what was expected.
  static StatusOr<Format> format_of(const std::string& path);
  // Opens the temporary file and writes the CSV header. Errors name the path.
  static StatusOr<std::unique_ptr<RequestLog>> open(const std::string& path);

  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  void write(const TurnRecord& r);
  // Flushes, closes and renames the temporary file onto the target. Returns an error message, or "".
  std::string commit();
  int64_t records() const { return records_; }

 private:
  RequestLog(std::string path, std::string tmp, Format format, std::FILE* f);

  std::string path_, tmp_;
  Format format_;
  std::FILE* f_;
  int64_t records_ = 0;
  bool failed_ = false;  // a write failed (disk full): commit() reports it
};

}  // namespace sim::metrics
