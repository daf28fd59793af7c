#include "sim/workload/trajectory.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "sim/config/json_util.h"
#include "sim/core/paths.h"
#include "sim/workload/request_trace.h"

namespace sim::workload {

namespace {

// Returns the 0-based offset of the first byte that is not part of valid UTF-8 (no overlong forms, no
// surrogates, nothing above U+10FFFF), or npos when `s` is valid.
size_t invalid_utf8_at(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string::npos;
}

bool is_blank(const std::string& s) {
  return s.find_first_not_of(" \t\r") == std::string::npos;
}

// Parses one line (already known to be valid UTF-8 and not blank) into `out`.
Status parse_line(const std::string& line, const std::string& where, Trajectory& out) {
  nlohmann::json j;
  SIM_RETURN_IF_ERROR(parse_json_line(line, where, &j));
  if (!j.is_object()) {
    std::string got = j.dump();
    if (got.size() > 60) got = got.substr(0, 57) + "...";
    return Status::error(
        fmt::format("{}: expected a JSON object {{\"id\": ..., \"turns\": [...]}}, got {}", where, got));
  }
  config::JsonReader r(j, where, "");
  out.id = r.string("id", std::nullopt);
  if (r.ok() && out.id.empty()) r.fail("id", "a non-empty string", r.raw("id"));
  const nlohmann::json* turns = r.raw("turns");
  if (r.ok() && (turns == nullptr || !turns->is_array() || turns->empty())) {
    r.fail("turns", "a non-empty array of turns", turns);
  }
  SIM_RETURN_IF_ERROR(r.finish());
  out.turns.clear();
  out.turns.reserve(turns->size());
  for (size_t k = 0; k < turns->size(); ++k) {
    const nlohmann::json& t = (*turns)[k];
    std::string path = fmt::format("turns[{}]", k);
    if (!t.is_object()) {
      return Status::error(fmt::format("{}: {}: expected an object {{\"append\": ..., \"gen\": ...}}, got {}",
                                       where, path, t.dump().substr(0, 60)));
    }
    config::JsonReader tr(t, where, path);
    Turn turn;
    turn.append = static_cast<int32_t>(tr.integer("append", std::nullopt, 1, kMaxTurnTokens));
    turn.gen = static_cast<int32_t>(tr.integer("gen", std::nullopt, 1, kMaxTurnTokens));
    if (const nlohmann::json* th = tr.raw("think_s");
        th != nullptr && th->is_number() && th->get<double>() > config::kMaxIdleS)
      tr.fail("think_s",
              fmt::format("a number in [0, {:g}] (seconds; a longer think leaves the run idle for days of "
                          "simulated time)",
                          config::kMaxIdleS),
              th);
    turn.think_s = tr.number("think_s", 0.0, 0, config::kMaxIdleS);
    SIM_RETURN_IF_ERROR(tr.finish());
    out.turns.push_back(turn);
  }
  return Status::ok();
}

}  // namespace

int64_t total_tokens(const Trajectory& t) {
  int64_t sum = 0;
  for (const Turn& turn : t.turns) sum += static_cast<int64_t>(turn.append) + turn.gen;
  return sum;
}

StatusOr<std::vector<Trajectory>> parse_trajectories(const std::string& text, const std::string& name) {
  if (text.empty())
    return Status::error(fmt::format("{}: empty file: expected one trajectory per line", name));
  std::vector<Trajectory> out;
  std::map<std::string, size_t> first_line;  // id -> line
  size_t start = 0, line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string where = fmt::format("{}:{}", name, line_no);
    size_t bad = invalid_utf8_at(line);
    if (bad != std::string::npos) {
      return Status::error(fmt::format("{}: invalid UTF-8 (byte 0x{:02x} at column {})", where,
                                       static_cast<unsigned char>(line[bad]), bad + 1));
    }
    if (is_blank(line)) {
      return Status::error(
          fmt::format("{}: blank line (the format holds exactly one trajectory per line)", where));
    }
    Trajectory t;
    SIM_RETURN_IF_ERROR(parse_line(line, where, t));
    auto [it, inserted] = first_line.emplace(t.id, line_no);
    if (!inserted) {
      return Status::error(fmt::format("{}: id: duplicate {} (first on line {})", where,
                                       nlohmann::json(t.id).dump(), it->second));
    }
    out.push_back(std::move(t));
  }
  return out;
}

StatusOr<std::vector<Trajectory>> read_trajectories(const std::string& path) {
  StatusOr<std::string> text = config::read_text_file(path, "a trajectory JSONL file");
  if (!text) return text.status();
  return parse_trajectories(*text, path);
}

std::string format_trajectories(const std::vector<Trajectory>& ts) {
  std::string out;
  for (const Trajectory& t : ts) {
    out += "{\"id\":" + nlohmann::json(t.id).dump() + ",\"turns\":[";
    for (size_t k = 0; k < t.turns.size(); ++k) {
      const Turn& turn = t.turns[k];
      out += fmt::format("{}{{\"append\":{},\"gen\":{}", k == 0 ? "" : ",", turn.append, turn.gen);
      if (turn.think_s != 0) out += fmt::format(",\"think_s\":{}", turn.think_s);
      out += '}';
    }
    out += "]}\n";
  }
  return out;
}

Status write_trajectories(const std::string& path, const std::vector<Trajectory>& ts) {
  if (ts.empty()) return Status::error(fmt::format("{}: refusing to write an empty trajectory file", path));
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Trajectory& t = ts[i];
    std::string where = fmt::format("{}: trajectories[{}]", path, i);
    if (t.id.empty()) return Status::error(where + ".id: expected a non-empty string");
    if (invalid_utf8_at(t.id) != std::string::npos) return Status::error(where + ".id: not valid UTF-8");
    auto [it, inserted] = seen.emplace(t.id, i);
    if (!inserted) {
      return Status::error(fmt::format("{}.id: duplicate {} (also trajectories[{}])", where,
                                       nlohmann::json(t.id).dump(), it->second));
    }
    if (t.turns.empty()) return Status::error(where + ".turns: expected at least one turn");
    for (size_t k = 0; k < t.turns.size(); ++k) {
      const Turn& turn = t.turns[k];
      if (turn.append < 1 || turn.gen < 1) {
        return Status::error(fmt::format("{}.turns[{}]: expected append and gen >= 1, got {} and {}", where,
                                         k, turn.append, turn.gen));
      }
      if (!std::isfinite(turn.think_s) || turn.think_s < 0 || turn.think_s > config::kMaxIdleS) {
        return Status::error(fmt::format("{}.turns[{}].think_s: expected a number in [0, {:g}], got {}",
                                         where, k, config::kMaxIdleS, turn.think_s));
      }
    }
  }
  std::string err = write_file_atomically(path, format_trajectories(ts));
  if (!err.empty()) return Status::error(fmt::format("{}: {}", path, err));
  return Status::ok();
}

}  // namespace sim::workload
