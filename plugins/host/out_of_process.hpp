// A plugin that only ever runs inside simprec-plugin-runner child processes: one to describe
// it, one per kernel call. A crash, a hang past the timeout or a refused plugin is reported as
// a PluginError and the host carries on.
#pragma once

#include "plugins/host/plugin.hpp"

namespace simprec::plugins {

class OutOfProcessPlugin final : public Plugin {
 public:
  // Describes the plugin in a runner; throws PluginError when that fails.
  OutOfProcessPlugin(const std::filesystem::path& path, const OpenOptions& options);

  const PluginInfo& info() const override { return info_; }
  std::vector<HostTensor> run(const KernelRequest& request) override;

 private:
  std::filesystem::path path_;
  OpenOptions options_;
  PluginInfo info_;
};

}  // namespace simprec::plugins
