// The exception types of the plugin host: a plugin was refused, failed a call, crashed, overran
// an output or timed out. The message names the plugin and what went wrong.
#pragma once

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <string>

namespace simprec::plugins {

struct PluginError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An in-process call that outlived its timeout. Its thread could not be stopped and still runs
// inside the plugin (plugins/host/plugin_thread.hpp), so the process should report this and
// end without running exit handlers, which could tear down what that thread still uses.
struct AbandonedCallError : PluginError {
  using PluginError::PluginError;
};

// "0.3 s", for messages about time limits.
inline std::string seconds_text(std::chrono::milliseconds ms) {
  std::ostringstream text;
  text << static_cast<double>(ms.count()) / 1000.0 << " s";
  return text.str();
}

}  // namespace simprec::plugins
