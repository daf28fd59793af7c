#include "sim/workload/request_trace.h"

#include <fmt/format.h>

#include "sim/workload/alibaba.h"
#include "sim/workload/azure.h"
#include "sim/workload/mooncake.h"

namespace sim::workload {

StatusOr<RequestTrace> read_request_trace(const std::string& format, const std::string& path) {
  if (format == "mooncake") return read_mooncake(path);
  if (format == "azure") return read_azure(path);
  if (format == "alibaba") return read_alibaba(path);
  return Status::error(fmt::format(
      "{}: unknown request-trace format \"{}\" (expected mooncake, azure or alibaba)", path, format));
}

double token_weighted_hit(const RequestTrace& t) {
  int64_t hit = 0, input = 0;
  for (const TraceRequest& r : t.requests) {
    hit += r.hit_tokens;
    input += r.input_tokens;
  }
  return input == 0 ? 0.0 : static_cast<double>(hit) / static_cast<double>(input);
}

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    // Sequence length, bits of the lead byte and smallest code point it may encode.
    size_t len;
    uint32_t cp, smallest;
    if (lead >= 0xC0 && lead < 0xE0) {
      len = 2, cp = lead & 0x1Fu, smallest = 0x80;
    } else if (lead >= 0xE0 && lead < 0xF0) {
      len = 3, cp = lead & 0x0Fu, smallest = 0x800;
    } else if (lead >= 0xF0 && lead < 0xF8) {
      len = 4, cp = lead & 0x07u, smallest = 0x10000;
    } else {
      return i;  // a continuation byte without a lead, or 0xF8..0xFF
    }
    if (s.size() - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0u) != 0x80u) return i;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    if (cp < smallest || cp > 0x10FFFF || surrogate) return i;
    i += len;
  }
  return std::string_view::npos;
}

bool TextLines::next(std::string_view* line) {
  if (pos_ >= text_.size()) return false;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view l = text_.substr(pos_, end - pos_);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  pos_ = end + 1;
  ++line_no_;
  *line = l;
  return true;
}

Status check_trace_line(std::string_view line, const std::string& where, const char* unit) {
  size_t bad = first_invalid_utf8(line);
  if (bad != std::string_view::npos) {
    return Status::error(fmt::format("{}: invalid UTF-8 (byte 0x{:02x} at column {})", where,
                                     static_cast<unsigned char>(line[bad]), bad + 1));
  }
  if (line.find_first_not_of(" \t") == std::string_view::npos) {
    return Status::error(
        fmt::format("{}: blank line (the format holds exactly one {} per line)", where, unit));
  }
  return Status::ok();
}

Status parse_json_line(std::string_view line, const std::string& where, nlohmann::json* out) {
  try {
    *out = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    size_t pos = what.find("syntax error");
    return Status::error(fmt::format("{}:{}: malformed JSON (a truncated line?): {}", where, e.byte,
                                     pos == std::string::npos ? what : what.substr(pos)));
  } catch (const nlohmann::json::exception& e) {  // out_of_range.406: a number beyond the range of a double
    std::string what = e.what();
    size_t pos = what.find("] ");
    return Status::error(
        fmt::format("{}: malformed JSON: {}", where, pos == std::string::npos ? what : what.substr(pos + 2)));
  }
  return Status::ok();
}

std::string show_json(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

Status read_block_ids(const nlohmann::json& ids, int64_t input, int64_t block_tokens,
                      const std::string& where, std::vector<int64_t>* out) {
  const size_t want = static_cast<size_t>((input + block_tokens - 1) / block_tokens);
  if (ids.size() != want) {
    return Status::error(fmt::format("{}: hash_ids: expected {} block ids (ceil({} / {})), got {}", where,
                                     want, input, block_tokens, ids.size()));
  }
  out->clear();
  out->reserve(want);
  for (size_t k = 0; k < ids.size(); ++k) {
    const nlohmann::json& v = ids[k];
    const bool ok = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)
                                           : v.is_number_integer() && v.get<int64_t>() >= 0;
    if (!ok)
      return Status::error(
          fmt::format("{}: hash_ids[{}]: expected an integer >= 0, got {}", where, k, show_json(v)));
    out->push_back(v.get<int64_t>());
  }
  return Status::ok();
}

}  // namespace sim::workload
