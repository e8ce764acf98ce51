#include "plugins/host/plugin_search.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace simprec::plugins {
namespace fs = std::filesystem;

std::vector<std::string> plugin_path_entries() {
  std::vector<std::string> entries;
  const char* env = std::getenv("SIMPREC_PLUGIN_PATH");
  if (!env) return entries;
  const std::string text = env;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t colon = std::min(text.find(':', start), text.size());
    if (colon > start) entries.push_back(text.substr(start, colon - start));
    start = colon + 1;
  }
  return entries;
}

std::vector<fs::path> expand_plugin_entries(const std::vector<std::string>& entries) {
  std::vector<fs::path> files;
  // A file reached through two entries (a built-in folder also on SIMPREC_PLUGIN_PATH) once.
  std::vector<fs::path> seen;
  const auto add = [&](const fs::path& file) {
    std::error_code error;
    const fs::path key = fs::weakly_canonical(file, error);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return;
    seen.push_back(key);
    files.push_back(file);
  };
  for (const auto& entry : entries) {
    const fs::path path = entry;
    if (fs::is_directory(path)) {
      std::vector<fs::path> found;
      for (const auto& item : fs::directory_iterator(path)) {
        if (item.is_regular_file() && item.path().extension() == ".so")
          found.push_back(item.path());
      }
      std::sort(found.begin(), found.end());
      for (const auto& f : found) add(f);
    } else if (fs::exists(path)) {
      add(path);
    } else {
      throw std::invalid_argument("plugin path entry '" + entry + "' does not exist");
    }
  }
  return files;
}

std::vector<std::string> builtin_plugin_dirs() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return {};
  const fs::path bin = exe.parent_path();
  // In the build tree: the plugins the build made. Installed: PREFIX/lib.../simprec/plugins
  // beside PREFIX/bin.
  if (fs::equivalent(bin, SIMPREC_BUILD_BIN_DIR, error)) {
    if (fs::is_directory(SIMPREC_BUILD_PLUGIN_DIR)) return {SIMPREC_BUILD_PLUGIN_DIR};
    return {};
  }
  if (bin.filename() != fs::path(SIMPREC_INSTALL_BIN_DIR).filename()) return {};
  const fs::path installed = bin.parent_path() / SIMPREC_INSTALL_PLUGIN_DIR;
  if (fs::is_directory(installed)) return {installed.string()};
  return {};
}

std::vector<std::string> default_plugin_entries() {
  std::vector<std::string> entries = builtin_plugin_dirs();
  const std::vector<std::string> path = plugin_path_entries();
  entries.insert(entries.end(), path.begin(), path.end());
  return entries;
}

fs::path resolve_plugin(const std::string& name_or_path) {
  if (fs::is_regular_file(name_or_path)) return name_or_path;
  const bool looks_like_path = name_or_path.find('/') != std::string::npos;
  if (!looks_like_path) {
    const std::vector<std::string> candidates{name_or_path, name_or_path + ".so",
                                              "lib" + name_or_path + ".so",
                                              "libsimprec_" + name_or_path + ".so"};
    for (const auto& entry : default_plugin_entries()) {
      const fs::path path = entry;
      if (fs::is_directory(path)) {
        for (const auto& candidate : candidates) {
          if (fs::is_regular_file(path / candidate)) return path / candidate;
        }
      } else if (std::find(candidates.begin(), candidates.end(), path.filename().string()) !=
                 candidates.end()) {
        return path;
      }
    }
  }
  const char* env = std::getenv("SIMPREC_PLUGIN_PATH");
  std::string builtin;
  for (const auto& dir : builtin_plugin_dirs()) builtin += (builtin.empty() ? "" : ":") + dir;
  throw std::invalid_argument(
      "plugin '" + name_or_path + "' is neither a file nor " +
      (looks_like_path ? std::string("a name")
                       : "a built-in plugin (in " + (builtin.empty() ? "none" : builtin) +
                             ") or one on SIMPREC_PLUGIN_PATH=" + std::string(env ? env : "")));
}

}  // namespace simprec::plugins
