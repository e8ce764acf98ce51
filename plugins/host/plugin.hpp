// The C++ face of a loaded plugin: describe it, run one of its kernels. Two implementations:
// in-process (dlopen, fast, a crash takes the host down, a hang past the timeout is abandoned
// on its thread: AbandonedCallError) and out-of-process (each call in a fresh
// simprec-plugin-runner process with a timeout; a crash or hang becomes a PluginError).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "plugins/host/host_tensor.hpp"
#include "plugins/host/kernel_request.hpp"
#include "plugins/host/plugin_info.hpp"

namespace simprec::plugins {

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual const PluginInfo& info() const = 0;
  // Checks the request against the kernel's description, runs the kernel and returns its
  // outputs. Throws std::invalid_argument for a request that does not fit the kernel and
  // PluginError when the plugin fails, crashes, writes past the end of an output or times out
  // (in process: AbandonedCallError, after which the process should end).
  virtual std::vector<HostTensor> run(const KernelRequest& request) = 0;
};

enum class Isolation { kInProcess, kOutOfProcess };

struct OpenOptions {
  Isolation isolation = Isolation::kOutOfProcess;
  // A call (or loading and describing the plugin) that takes longer is killed out of process,
  // abandoned in process (plugins/host/plugin_thread.hpp).
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // Out of process only: the runner executable; empty: found by find_runner().
  std::filesystem::path runner;
};

// Loads the plugin, negotiates the ABI version and reads its description. Throws PluginError
// naming the path when the plugin is refused (AbandonedCallError: in process, past the timeout).
std::unique_ptr<Plugin> open_plugin(const std::filesystem::path& path,
                                    const OpenOptions& options = {});

// The simprec-plugin-runner to use: $SIMPREC_PLUGIN_RUNNER, else one next to the running
// executable, else the one this build produced. Throws PluginError when there is none.
std::filesystem::path find_runner();

}  // namespace simprec::plugins
