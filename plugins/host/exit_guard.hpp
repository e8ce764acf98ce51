// A plugin that ends the process from inside its own code (exit(), quick_exit()) would end
// simprec with the plugin's status, 0 say, having printed nothing. While a thread runs plugin
// code inside a PluginCodeScope, an exit from that thread is reported instead, as
// "simprec: error: WHO ended the process (exit or quick_exit) while DOING, instead of returning"
// on stderr (the runner: as its response, for the host to raise), and the process ends with
// status 1
// without running the exit handlers still to come (the plugin's own, or simprec's, may not be in
// a state to run). _exit() and the exit_group system call run no handler and cannot be caught
// in process; out of process the host reports a runner that ended without a response.
#pragma once

#include <filesystem>
#include <string>

namespace simprec::plugins {

class PluginCodeScope {
 public:
  // `who`: "plugin /p/x.so"; `doing`: "running kernel 'gemm'". Installs the exit handlers the
  // first time.
  PluginCodeScope(const std::string& who, const std::string& doing);
  ~PluginCodeScope();
  PluginCodeScope(const PluginCodeScope&) = delete;
  PluginCodeScope& operator=(const PluginCodeScope&) = delete;

 private:
  std::string report_;
  const std::string* previous_;
};

// Reports go to this file as {"ok": false, "error": REPORT} instead of stderr (the runner's
// response file, as guard_faults.hpp's).
void report_plugin_exits_to_response_file(const std::filesystem::path& file);

}  // namespace simprec::plugins
