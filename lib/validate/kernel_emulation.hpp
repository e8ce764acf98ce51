// The emulation side of `simprec validate`: for each kernel kind, code that computes what the
// kernel's declared emulation model predicts for the same inputs. Matmul and device-function
// kernels are built in; attention kernels join through register_kernel_emulator().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "plugins/host/host_tensor.hpp"
#include "plugins/host/plugin_info.hpp"

namespace simprec::validate {

struct EmulationCall {
  const plugins::KernelInfo& kernel;
  std::string model;  // the kernel's emulation model, or the one the user asked to try instead
  const std::vector<plugins::HostTensor>& inputs;
  const std::vector<plugins::NamedValue>& parameters;
};

// Fills `outputs` (shapes and formats already set, as the kernel got them).
using KernelEmulator =
    std::function<void(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs)>;

void register_kernel_emulator(plugins::KernelKind kind, KernelEmulator emulator);
bool has_kernel_emulator(plugins::KernelKind kind);
// Throws std::invalid_argument when the kind has no emulator yet.
void emulate_kernel(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs);

// Helpers for emulators: the input of that name (nullptr when absent), an attribute or
// parameter as text (fallback when absent).
const plugins::HostTensor* find_input(const EmulationCall& call, const std::string& name);
std::string attribute_text(const plugins::KernelInfo& kernel, const std::string& name,
                           const std::string& fallback);

}  // namespace simprec::validate
