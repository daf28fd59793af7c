// Locating project files (models/, traces/) independently of the working directory.
#pragma once

#include <string>

namespace sim {

// The project's source directory, fixed at build time.
const char* project_root();

// Resolves `name` as given (absolute, or relative to the working directory), else relative to `base_dir`,
// else relative to the project root. Returns `name` unchanged when no candidate exists.
std::string resolve_path(const std::string& name, const std::string& base_dir);

// A reference to a project file: a bare name (no '/', not ending in ".json") of a kind means
// models/<kind>/<name>.json (e.g. "hopper-8x400g" of kind "hardware"); anything else, or kind nullptr, is a
// path, returned as given.
std::string model_file_reference(const std::string& value, const char* kind);

// The bare names of a kind that the project ships (models/<kind>/*.json, sorted), joined by ", ".
std::string shipped_names(const char* kind);

// `path` made absolute (against the working directory) and lexically normal.
std::string absolute_path(const std::string& path);

// Whether two paths name one file: equal as given, or equal once canonical (symbolic links, "..").
bool same_file(const std::string& a, const std::string& b);

// Writes `text` to `path` atomically: a temp file in the same directory, then rename. Creates parent
// directories. Returns an error message, or "" on success.
std::string write_file_atomically(const std::string& path, const std::string& text);

// Creates the parent directories of `path` and checks that a file can be created there (a probe file,
// removed at once), so that a long run fails before it starts, not after. Returns an error message
// naming the path, or "".
std::string probe_writable(const std::string& path);

}  // namespace sim
