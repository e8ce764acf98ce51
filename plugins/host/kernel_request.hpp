// One call of a kernel as the host prepares it: the inputs and parameters the user gave, checked
// against the kernel's description before any plugin code runs, and the outputs the host
// allocates for the plugin to fill.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plugins/host/host_tensor.hpp"
#include "plugins/host/plugin_info.hpp"

namespace simprec::plugins {

struct KernelRequest {
  std::string kernel;
  std::vector<HostTensor> inputs;
  std::vector<NamedValue> parameters;
  // Format of each output by operand name; outputs not named get their first accepted format.
  std::map<std::string, std::string> output_formats;
};

// Checks the request against the kernel (known operands, accepted formats, shapes that agree
// with the declared symbols and their constraints and with the kernel kind's shapes, required
// inputs and parameters present, parameter types) and returns the zero-filled outputs to pass
// to the plugin.
// Throws std::invalid_argument saying what does not fit.
std::vector<HostTensor> prepare_outputs(const KernelInfo& kernel, const KernelRequest& request);

// The value of each shape symbol, as determined by the inputs of the request.
std::map<std::string, int64_t> bind_shape_symbols(const KernelInfo& kernel,
                                                  const std::vector<HostTensor>& inputs);

}  // namespace simprec::plugins
