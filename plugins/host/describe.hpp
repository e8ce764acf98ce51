// Reads a plugin's C description into PluginInfo, refusing anything the host cannot describe:
// a struct_size smaller than ABI 1.0's, another major version, a null name, an unknown kernel
// kind, a format simprec does not know, an operand the kind needs that is missing...
#pragma once

#include <string>

#include "plugins/host/plugin_info.hpp"
#include "plugins/simprec_plugin.h"

namespace simprec::plugins {

// Throws PluginError("plugin <path>: ...") saying what is wrong and where
// (e.g. "kernel #2 'gemm': operand #0 has no name").
PluginInfo describe_plugin(const SimprecPlugin* plugin, const std::string& path);

}  // namespace simprec::plugins
