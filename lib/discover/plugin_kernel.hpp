// A plugin's attention forward kernel (Q, K, V -> O[, LSE]) as a kernel the search calls on its
// probes: the probes fitted to the kernel's declared dimensions, the causal mask passed where the
// kernel declares a causal parameter, the scale left to the kernel's default (1/sqrt(D)).
#pragma once

#include <string>

#include "lib/discover/kernel.hpp"
#include "plugins/host/plugin.hpp"

namespace simprec::discover {

class PluginKernel final : public CallableKernel {
 public:
  // input_format: one of Q's accepted formats; empty: the first. Throws std::invalid_argument
  // for a kernel that is not an attention forward kernel or a format it does not accept.
  PluginKernel(plugins::Plugin& plugin, const std::string& kernel, std::string input_format);

  std::string description() const override;
  std::string input_format() const override { return format_; }
  ProbeLimits limits() const override;
  Case run(const ProbeDesign& probe, const attention::AttentionInputs& inputs) override;

 private:
  plugins::Plugin& plugin_;
  const plugins::KernelInfo& kernel_;
  std::string format_;
};

}  // namespace simprec::discover
