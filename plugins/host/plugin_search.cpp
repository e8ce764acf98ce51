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
  for (const auto& entry : entries) {
    const fs::path path = entry;
    if (fs::is_directory(path)) {
      std::vector<fs::path> found;
      for (const auto& item : fs::directory_iterator(path)) {
        if (item.is_regular_file() && item.path().extension() == ".so")
          found.push_back(item.path());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(path)) {
      files.push_back(path);
    } else {
      throw std::invalid_argument("plugin path entry '" + entry + "' does not exist");
    }
  }
  return files;
}

fs::path resolve_plugin(const std::string& name_or_path) {
  if (fs::is_regular_file(name_or_path)) return name_or_path;
  const bool looks_like_path = name_or_path.find('/') != std::string::npos;
  if (!looks_like_path) {
    const std::vector<std::string> candidates{name_or_path, name_or_path + ".so",
                                              "lib" + name_or_path + ".so",
                                              "libsimprec_" + name_or_path + ".so"};
    for (const auto& entry : plugin_path_entries()) {
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
  throw std::invalid_argument(
      "plugin '" + name_or_path + "' is neither a file nor " +
      (looks_like_path ? std::string("a name")
                       : "a plugin on SIMPREC_PLUGIN_PATH=" + std::string(env ? env : "")));
}

}  // namespace simprec::plugins
