// JSON forms of plugin descriptions and kernel requests: the protocol between the host and the
// simprec-plugin-runner process, and the machine-readable `simprec plugins list --json`.
#pragma once

#include <nlohmann/json.hpp>

#include "plugins/host/kernel_request.hpp"
#include "plugins/host/plugin_info.hpp"

namespace simprec::plugins {

nlohmann::json to_json(const PluginInfo& info);
// Throws PluginError when the JSON is not a description (a runner from another build...).
PluginInfo plugin_info_from_json(const nlohmann::json& json);

// Values travel as text (value_text / parse_value) so that no double loses bits and inf/nan
// survive.
nlohmann::json to_json(const NamedValue& value);
NamedValue named_value_from_json(const nlohmann::json& json);

}  // namespace simprec::plugins
