// What the plugin commands share: reading --timeout, opening the plugin a command names, and
// ending the process when an in-process call outlived its time limit.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "lib/cli/command.hpp"
#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_error.hpp"
#include "plugins/host/plugin_search.hpp"

namespace simprec::cli {

// --timeout in seconds as a time limit, rounded up to whole milliseconds (CLI11 has checked
// that it is positive). Throws UsageError for a limit beyond a year, which the clock arithmetic
// could not hold.
inline std::chrono::milliseconds plugin_time_limit(double seconds) {
  constexpr double kMaxSeconds = 365.0 * 24 * 3600;
  if (!(seconds <= kMaxSeconds)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds);
    throw UsageError(std::string("--timeout ") + text +
                     ": expected at most a year of seconds (31536000)");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000)));
}

// How --in-process and --timeout ask plugins to be opened.
inline plugins::OpenOptions plugin_open_options(bool in_process, double timeout_seconds) {
  plugins::OpenOptions options;
  options.isolation =
      in_process ? plugins::Isolation::kInProcess : plugins::Isolation::kOutOfProcess;
  options.timeout = plugin_time_limit(timeout_seconds);
  return options;
}

// The plugin a command's --plugin names (a file, or a name found on the plugin path), opened;
// a name that finds nothing is a UsageError.
inline std::unique_ptr<plugins::Plugin> open_named_plugin(const std::string& name,
                                                          const plugins::OpenOptions& options) {
  std::filesystem::path path;
  try {
    path = plugins::resolve_plugin(name);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return plugins::open_plugin(path, options);
}

// Runs a command's body. An in-process plugin call that outlived its time limit left a thread
// running inside the plugin (plugins/host/plugin_thread.hpp): the command prints the error and
// ends the process at once with status 1, skipping exit handlers and static destructors, which
// could tear down what that thread still uses (a CUDA context, the plugin's globals) and crash
// or hang on the way out.
template <class Body>
void ending_after_abandoned_calls(Body body) {
  try {
    body();
  } catch (const plugins::AbandonedCallError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "simprec: error: %s\n", e.what());
    std::fflush(stderr);
    _exit(1);
  }
}

}  // namespace simprec::cli
