// simprec plugins list [PATH...]: the plugins found and what their kernels claim.
// The output format is documented in docs/plugins.md and kept stable: one record per line,
// the first word naming the record, details as key=value.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "lib/cli/command.hpp"
#include "lib/cli/plugin_timeouts.hpp"
#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_error.hpp"
#include "plugins/host/plugin_json.hpp"
#include "plugins/host/plugin_search.hpp"
#include "plugins/host/plugin_text.hpp"

namespace simprec::cli {
namespace {

using namespace simprec::plugins;

struct ListOptions {
  std::vector<std::string> paths;
  std::vector<std::string> plugin_options;  // --plugin, listed after the positional paths
  bool in_process = false;
  double timeout_seconds = 30;
  bool json = false;
};

std::string join(const std::vector<std::string>& items, const char* separator = ",") {
  std::string text;
  for (const auto& s : items) {
    if (!text.empty()) text += separator;
    text += s;
  }
  return text;
}

// Free text from a plugin on one line, so that every record stays one line: line breaks and
// tabs become spaces, other control characters \xNN. (Names and values cannot hold control
// characters: the host refuses such a plugin, plugins/host/describe.cpp.)
std::string one_line(std::string text) {
  for (auto& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return one_line_text(text);
}

void print_plugin(const PluginInfo& p) {
  std::printf("plugin %s version=%s abi=%u.%u path=%s\n", p.name.c_str(), p.version.c_str(),
              p.abi_major, p.abi_minor, one_line_text(p.path).c_str());
  if (!p.description.empty()) std::printf("  description %s\n", one_line(p.description).c_str());
  for (const auto& k : p.kernels) {
    std::printf("  kernel %s kind=%s model=%s bit-exact=%s\n", k.name.c_str(),
                kernel_kind_name(k.kind).c_str(),
                k.emulation_model.empty() ? "none" : k.emulation_model.c_str(),
                k.bit_exact ? "yes" : "no");
    if (!k.description.empty())
      std::printf("    description %s\n", one_line(k.description).c_str());
    for (const auto& o : k.operands) {
      std::printf("    %s %s formats=%s shape=[%s]%s\n", o.is_output ? "output" : "input",
                  o.name.c_str(), join(o.formats).c_str(), join(o.shape).c_str(),
                  o.optional ? " optional" : "");
    }
    for (const auto& d : k.dimensions) {
      std::printf("    dimension %s min=%lld max=%s multiple-of=%lld\n", d.symbol.c_str(),
                  static_cast<long long>(d.min),
                  d.max == 0 ? "none" : std::to_string(d.max).c_str(),
                  static_cast<long long>(d.multiple_of));
    }
    for (const auto& q : k.parameters) {
      std::printf("    parameter %s type=%s %s default=%s%s%s\n", q.name.c_str(),
                  value_type_name(q.type).c_str(), q.required ? "required" : "optional",
                  q.default_value.empty() ? "none" : q.default_value.c_str(),
                  q.description.empty() ? "" : " -- ", one_line(q.description).c_str());
    }
    for (const auto& a : k.attributes) {
      std::printf("    attribute %s=%s\n", a.name.c_str(), value_text(a.value).c_str());
    }
  }
}

void run_list(const ListOptions& options) {
  std::vector<std::string> entries = options.paths;
  entries.insert(entries.end(), options.plugin_options.begin(), options.plugin_options.end());
  std::vector<std::filesystem::path> files;
  try {
    files = expand_plugin_entries(entries.empty() ? default_plugin_entries() : entries);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (files.empty()) {
    std::fprintf(stderr,
                 "simprec: no plugins found: none are built in, and none were passed as files "
                 "or directories or set in SIMPREC_PLUGIN_PATH\n");
    return;
  }
  const OpenOptions open_options = plugin_open_options(options.in_process, options.timeout_seconds);
  nlohmann::json listing = nlohmann::json::array();
  size_t refused = 0;
  for (const auto& file : files) {
    try {
      const auto plugin = open_plugin(file, open_options);
      if (options.json) {
        listing.push_back(to_json(plugin->info()));
      } else {
        print_plugin(plugin->info());
      }
    } catch (const AbandonedCallError&) {
      throw;  // its thread still runs inside the plugin: the process must end
    } catch (const PluginError& e) {
      // One bad plugin does not hide the others; the exit status still reports it.
      std::fflush(stdout);
      std::fprintf(stderr, "simprec: error: %s\n", e.what());
      ++refused;
    }
  }
  if (options.json) std::cout << listing.dump(2) << "\n";
  if (refused > 0) {
    throw std::runtime_error(std::to_string(refused) + " of " + std::to_string(files.size()) +
                             " plugins could not be listed");
  }
}

const RegisterCommand registration{[](CLI::App& app) {
  auto* plugins = app.add_subcommand("plugins", "kernel plugins: list them and what they claim");
  plugins->require_subcommand(1);
  auto options = std::make_shared<ListOptions>();
  auto* list = plugins->add_subcommand("list", "show plugins, their kernels and emulation claims");
  list->add_option("paths", options->paths,
                   "plugin files or directories of *.so plugins (default: the built-in plugins "
                   "and $SIMPREC_PLUGIN_PATH)");
  list->add_option("--plugin", options->plugin_options, "a plugin file or directory (repeatable)");
  list->add_flag("--in-process", options->in_process,
                 "load plugins into this process (faster; a crashing plugin takes simprec down)");
  list->add_option("--timeout", options->timeout_seconds,
                   "seconds a plugin may take to describe itself")
      ->check(CLI::PositiveNumber);
  list->add_flag("--json", options->json, "print the descriptions as JSON");
  list->callback([options] { ending_after_abandoned_calls([&] { run_list(*options); }); });
}};

}  // namespace
}  // namespace simprec::cli
