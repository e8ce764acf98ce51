#include "plugins/host/exit_guard.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <nlohmann/json.hpp>

namespace simprec::plugins {
namespace {

// The report to give should the plugin code this thread runs end the process; an exit handler
// runs on the thread that called exit().
thread_local const std::string* t_plugin_code = nullptr;

std::mutex response_mutex;
std::string response_file;  // empty: stderr

void report_and_end() {
  const std::string* report_text = t_plugin_code;
  if (report_text == nullptr) return;  // an exit of simprec's own
  const std::string& report = *report_text;
  std::string file;
  {
    const std::lock_guard lock(response_mutex);
    file = response_file;
  }
  std::fflush(stdout);
  if (FILE* out = file.empty() ? nullptr : std::fopen(file.c_str(), "w")) {
    const nlohmann::json response = {{"ok", false}, {"error", report}};
    std::fputs(
        (response.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(),
        out);
    std::fclose(out);
  } else {
    std::fprintf(stderr, "simprec: error: %s\n", report.c_str());
    std::fflush(stderr);
  }
  _exit(1);
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit(report_and_end);
    std::at_quick_exit(report_and_end);
  });
}

}  // namespace

PluginCodeScope::PluginCodeScope(const std::string& who, const std::string& doing)
    : report_(who + " ended the process (exit or quick_exit) while " + doing +
              ", instead of returning"),
      previous_(t_plugin_code) {
  install_handlers();
  t_plugin_code = &report_;
}

PluginCodeScope::~PluginCodeScope() {
  t_plugin_code = previous_;
}

void report_plugin_exits_to_response_file(const std::filesystem::path& file) {
  const std::lock_guard lock(response_mutex);
  response_file = file.string();
}

}  // namespace simprec::plugins
