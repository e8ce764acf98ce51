// The emulation side of `simprec validate`: for each kernel kind, code that computes what the
// kernel's declared emulation model predicts for the same inputs. Matmul, device-function and
// attention kernels are built in; other kinds join through register_kernel_emulator().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "plugins/host/host_tensor.hpp"
#include "plugins/host/plugin_info.hpp"

namespace simprec::validate {

// Runs a device-function kernel (kind function, x -> y in fp32; with d, the divisor of div) of the
// kernel's plugin on fp32 arguments (bit patterns; d empty for a function of one argument) and
// returns y's bit patterns.
using FunctionRunner = std::function<std::vector<uint32_t>(
    const std::string& kernel, const std::vector<uint32_t>& x, const std::vector<uint32_t>& d)>;
// Output name -> exact reference values (doubles), for the outputs an emulator has one for.
using ReferenceValues = std::map<std::string, std::vector<double>>;

struct EmulationCall {
  const plugins::KernelInfo& kernel;
  std::string model;  // the kernel's emulation model, or the one the user asked to try instead
  const std::vector<plugins::HostTensor>& inputs;
  const std::vector<plugins::NamedValue>& parameters;
  // What validate_kernel adds: the kernel's plugin (for the kernels an emulator refers to by
  // name), a way to run its device functions, and where an emulator that knows the exact result
  // (attention: reference_attention) puts it. Each may be absent.
  const plugins::PluginInfo* plugin = nullptr;
  FunctionRunner run_function;
  ReferenceValues* reference = nullptr;
};

// Fills `outputs` (shapes and formats already set, as the kernel got them).
using KernelEmulator =
    std::function<void(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs)>;

// Throws std::invalid_argument for a call the emulator will refuse (bad parameters, a model it
// does not know, a kernel it needs that the plugin lacks): run before the plugin runs.
using KernelCallCheck =
    std::function<void(const EmulationCall& call, const std::vector<plugins::HostTensor>& outputs)>;

void register_kernel_emulator(plugins::KernelKind kind, KernelEmulator emulator,
                              KernelCallCheck check = {});
bool has_kernel_emulator(plugins::KernelKind kind);
// Throws std::invalid_argument when the kind has no emulator yet.
void emulate_kernel(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs);
// Runs the kind's check, if it has one, on the call and its outputs as prepare_outputs makes them.
void check_kernel_call(const EmulationCall& call, const std::vector<plugins::HostTensor>& outputs);

// Helpers for emulators: the input of that name (nullptr when absent), an attribute or
// parameter as text (fallback when absent).
const plugins::HostTensor* find_input(const EmulationCall& call, const std::string& name);
plugins::HostTensor* find_output(std::vector<plugins::HostTensor>& outputs,
                                 const std::string& name);
std::string attribute_text(const plugins::KernelInfo& kernel, const std::string& name,
                           const std::string& fallback);

}  // namespace simprec::validate
