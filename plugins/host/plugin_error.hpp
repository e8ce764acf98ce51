// The one exception type of the plugin host: a plugin was refused, failed a call, crashed or
// timed out. The message names the plugin and what went wrong.
#pragma once

#include <stdexcept>

namespace simprec::plugins {

struct PluginError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace simprec::plugins
