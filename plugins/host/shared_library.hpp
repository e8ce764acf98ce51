// A plugin loaded into this process with dlopen. The entry function is the first and only
// symbol looked up; the version is negotiated before anything else is read or called.
// With a time limit, all of the plugin's code runs on a worker thread of its own
// (plugin_thread.hpp); outputs are handed to kernels in guarded buffers (guarded_buffer.hpp), so
// that a kernel writing past the end of one is reported as such.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_thread.hpp"
#include "plugins/simprec_plugin.h"

namespace simprec::plugins {

class SharedLibraryPlugin final : public Plugin {
 public:
  // Throws PluginError when the library cannot be loaded or the plugin is refused, and
  // AbandonedCallError when loading or any later call outlives `time_limit`.
  explicit SharedLibraryPlugin(const std::filesystem::path& path,
                               std::optional<std::chrono::milliseconds> time_limit = {});
  ~SharedLibraryPlugin() override;
  SharedLibraryPlugin(const SharedLibraryPlugin&) = delete;
  SharedLibraryPlugin& operator=(const SharedLibraryPlugin&) = delete;

  const PluginInfo& info() const override { return info_; }
  std::vector<HostTensor> run(const KernelRequest& request) override;
  // Runs with outputs already prepared (the runner process uses this).
  void run_into(const KernelRequest& request, std::vector<HostTensor>& outputs);

 private:
  const SimprecKernel* c_kernel(const std::string& name) const;

  std::string path_;
  PluginThread thread_;
  void* handle_ = nullptr;
  const SimprecPlugin* plugin_ = nullptr;
  PluginInfo info_;
};

}  // namespace simprec::plugins
