// Where plugins are found: paths given on the command line and SIMPREC_PLUGIN_PATH, a
// colon-separated list of plugin files and of directories whose *.so files are plugins.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace simprec::plugins {

// The entries of $SIMPREC_PLUGIN_PATH (empty when unset).
std::vector<std::string> plugin_path_entries();

// The folders of the plugins shipped with this executable: PREFIX/lib.../simprec/plugins for an
// installed simprec, the build's plugin folder for one run from its build tree.
std::vector<std::string> builtin_plugin_dirs();

// Where plugins are looked for when none are named: the built-in folders, then
// $SIMPREC_PLUGIN_PATH.
std::vector<std::string> default_plugin_entries();

// Each entry as plugin files: a file as itself, a directory as its *.so files in name order.
// Throws std::invalid_argument for an entry that does not exist.
std::vector<std::filesystem::path> expand_plugin_entries(const std::vector<std::string>& entries);

// A --plugin argument: an existing file, or the name of a built-in plugin or of a plugin file on
// SIMPREC_PLUGIN_PATH
// ("cpu_reference" finds cpu_reference.so, libcpu_reference.so or libsimprec_cpu_reference.so).
// Throws std::invalid_argument saying where it looked.
std::filesystem::path resolve_plugin(const std::string& name_or_path);

}  // namespace simprec::plugins
