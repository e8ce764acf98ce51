// What the plugin tests share: where the built test plugins are, and open options.
#pragma once

#include <string>

#include "plugins/host/plugin.hpp"

namespace simprec::plugins {

inline const std::string kPluginDir = SIMPREC_TEST_PLUGIN_DIR;
inline const std::string kBrokenDir = SIMPREC_TEST_BROKEN_PLUGIN_DIR;

inline OpenOptions with_isolation(Isolation isolation) {
  OpenOptions options;
  options.isolation = isolation;
  return options;
}
inline OpenOptions in_process() {
  return with_isolation(Isolation::kInProcess);
}

}  // namespace simprec::plugins
