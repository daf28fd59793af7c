// Helpers for the config loader tests: a per-process scratch directory for small JSON files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/status.h"

namespace sim::config::testing {

// A fresh directory under the system temp dir, removed with everything in it at destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dpsim-config-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    dir_ = made ? made : tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `text` to <dir>/<name> (creating subdirectories) and returns the full path.
  std::string write(const std::string& name, const std::string& text) const {
    std::filesystem::path p = std::filesystem::path(dir_) / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (std::filesystem::path(dir_) / name).string(); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// The message of a failed load ("" when it succeeded), for REQUIRE_THAT(..., Contains(...)).
template <typename T>
std::string error_of(const StatusOr<T>& s) {
  return s ? std::string() : s.status().message();
}

inline std::string data_file(const std::string& name) {
  return std::string(DPSIM_SOURCE_DIR) + "/tests/data/config/" + name;
}

}  // namespace sim::config::testing
