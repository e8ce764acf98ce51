// A plugin loaded into this process with dlopen. The entry function is the first and only
// symbol looked up; the version is negotiated before anything else is read or called.
#pragma once

#include <filesystem>
#include <memory>

#include "plugins/host/plugin.hpp"
#include "plugins/simprec_plugin.h"

namespace simprec::plugins {

class SharedLibraryPlugin final : public Plugin {
 public:
  // Throws PluginError when the library cannot be loaded or the plugin is refused.
  explicit SharedLibraryPlugin(const std::filesystem::path& path);
  ~SharedLibraryPlugin() override;
  SharedLibraryPlugin(const SharedLibraryPlugin&) = delete;
  SharedLibraryPlugin& operator=(const SharedLibraryPlugin&) = delete;

  const PluginInfo& info() const override { return info_; }
  std::vector<HostTensor> run(const KernelRequest& request) override;
  // Runs with outputs already prepared (the runner process uses this).
  void run_into(const KernelRequest& request, std::vector<HostTensor>& outputs);

 private:
  const SimprecKernel* c_kernel(const std::string& name) const;

  void* handle_ = nullptr;
  const SimprecPlugin* plugin_ = nullptr;
  PluginInfo info_;
};

}  // namespace simprec::plugins
