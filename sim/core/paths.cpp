#include "sim/core/paths.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

namespace sim {

namespace fs = std::filesystem;

const char* project_root() {
  return DPSIM_SOURCE_DIR;
}

std::string model_file_reference(const std::string& value, const char* kind) {
  const bool bare = kind != nullptr && value.find('/') == std::string::npos &&
                    !(value.size() >= 5 && value.compare(value.size() - 5, 5, ".json") == 0);
  return bare ? "models/" + std::string(kind) + "/" + value + ".json" : value;
}

std::string shipped_names(const char* kind) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(project_root()) / "models" / kind, ec), end; !ec && it != end;
       it.increment(ec))
    if (it->path().extension() == ".json") names.push_back(it->path().stem().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string absolute_path(const std::string& path) {
  return fs::absolute(path).lexically_normal().string();
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(a, ea), cb = fs::weakly_canonical(b, eb);
  return a == b || (!ea && !eb && ca == cb);
}

std::string resolve_path(const std::string& name, const std::string& base_dir) {
  std::error_code ec;
  if (name.empty() || fs::path(name).is_absolute() || fs::exists(name, ec)) return name;
  for (const fs::path& base : {fs::path(base_dir), fs::path(project_root())}) {
    if (base.empty()) continue;
    fs::path p = base / name;
    if (fs::exists(p, ec)) return p.lexically_normal().string();
  }
  return name;
}

std::string write_file_atomically(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return fmt::format("cannot write {}: {}", tmp, std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return "write failed: " + tmp;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return fmt::format("cannot write {}: {} (renaming {} onto it)", path, why, tmp);
  }
  return "";
}

std::string probe_writable(const std::string& path) {
  if (path.empty()) return "an empty path";
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return fmt::format("{} is a directory, expected a file", path);
  if (p.has_parent_path()) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) return fmt::format("cannot create directory {}: {}", p.parent_path().string(), ec.message());
  }
  const std::string probe = fmt::format("{}.probe.{}", path, ::getpid());
  {
    std::ofstream f(probe, std::ios::binary | std::ios::trunc);
    if (!f) return fmt::format("cannot write {}: {}", path, std::strerror(errno));
  }
  std::remove(probe.c_str());
  return "";
}

}  // namespace sim
