#include "plugins/host/plugin.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "lib/limits/input_file.hpp"
#include "plugins/host/out_of_process.hpp"
#include "plugins/host/plugin_error.hpp"
#include "plugins/host/shared_library.hpp"

namespace simprec::plugins {
namespace fs = std::filesystem;

std::unique_ptr<Plugin> open_plugin(const fs::path& path, const OpenOptions& options) {
  if (!fs::exists(path)) throw PluginError("plugin " + path.string() + ": no such file");
  // dlopen of a FIFO or a device waits for a writer, in this process or the runner: only a
  // regular file is loaded, checked as the file reader checks every file simprec opens.
  try {
    limits::InputFile checked(path, "a plugin (a shared library)");
  } catch (const std::runtime_error& e) {
    throw PluginError(std::string("plugin ") + e.what());
  }
  // dlopen searches the library path for a bare name; a plugin is always a file we name.
  const fs::path absolute = fs::absolute(path);
  if (options.isolation == Isolation::kInProcess)
    return std::make_unique<SharedLibraryPlugin>(absolute, options.timeout);
  return std::make_unique<OutOfProcessPlugin>(absolute, options);
}

fs::path find_runner() {
  constexpr const char* kName = "simprec-plugin-runner";
  if (const char* env = std::getenv("SIMPREC_PLUGIN_RUNNER"); env && *env) {
    if (access(env, X_OK) != 0)
      throw PluginError(std::string("SIMPREC_PLUGIN_RUNNER=") + env + " is not an executable");
    return env;
  }
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error && access((self.parent_path() / kName).c_str(), X_OK) == 0)
    return self.parent_path() / kName;
#ifdef SIMPREC_PLUGIN_RUNNER_BUILD_PATH
  if (access(SIMPREC_PLUGIN_RUNNER_BUILD_PATH, X_OK) == 0) return SIMPREC_PLUGIN_RUNNER_BUILD_PATH;
#endif
  throw PluginError(
      std::string("cannot find ") + kName +
      " (looked at $SIMPREC_PLUGIN_RUNNER, next to this executable and in the build tree); "
      "set SIMPREC_PLUGIN_RUNNER or use --in-process");
}

}  // namespace simprec::plugins
