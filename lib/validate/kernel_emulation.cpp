#include "lib/validate/kernel_emulation.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

#include "lib/validate/attention_emulation.hpp"
#include "lib/validate/function_emulation.hpp"
#include "lib/validate/matmul_emulation.hpp"

namespace simprec::validate {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<plugins::KernelKind, KernelEmulator> emulators;
  std::map<plugins::KernelKind, KernelCallCheck> checks;
  // Built in explicitly: a self-registering object in a static library would be dropped by
  // the linker when nothing else refers to its file.
  Registry() {
    emulators[plugins::KernelKind::kMatmul] = emulate_matmul;
    emulators[plugins::KernelKind::kFunction] = emulate_function;
    emulators[plugins::KernelKind::kAttentionForward] = emulate_attention_forward;
    emulators[plugins::KernelKind::kAttentionBackward] = emulate_attention_backward;
    checks[plugins::KernelKind::kAttentionForward] = check_attention_call;
    checks[plugins::KernelKind::kAttentionBackward] = check_attention_call;
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_kernel_emulator(plugins::KernelKind kind, KernelEmulator emulator,
                              KernelCallCheck check) {
  std::lock_guard lock(registry().mutex);
  registry().emulators[kind] = std::move(emulator);
  registry().checks[kind] = std::move(check);
}

void check_kernel_call(const EmulationCall& call, const std::vector<plugins::HostTensor>& outputs) {
  KernelCallCheck check;
  {
    std::lock_guard lock(registry().mutex);
    const auto it = registry().checks.find(call.kernel.kind);
    if (it != registry().checks.end()) check = it->second;
  }
  if (check) check(call, outputs);
}

bool has_kernel_emulator(plugins::KernelKind kind) {
  std::lock_guard lock(registry().mutex);
  return registry().emulators.count(kind) > 0;
}

void emulate_kernel(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs) {
  KernelEmulator emulator;
  {
    std::lock_guard lock(registry().mutex);
    const auto it = registry().emulators.find(call.kernel.kind);
    if (it != registry().emulators.end()) emulator = it->second;
  }
  if (!emulator) {
    throw std::invalid_argument("validate cannot emulate " +
                                plugins::kernel_kind_name(call.kernel.kind) +
                                " kernels yet (kernel '" + call.kernel.name + "')");
  }
  if (call.model.empty()) {
    throw std::invalid_argument("kernel '" + call.kernel.name +
                                "' names no emulation model; pass --model to compare with one");
  }
  emulator(call, outputs);
}

const plugins::HostTensor* find_input(const EmulationCall& call, const std::string& name) {
  for (const auto& t : call.inputs) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

plugins::HostTensor* find_output(std::vector<plugins::HostTensor>& outputs,
                                 const std::string& name) {
  for (auto& t : outputs) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string attribute_text(const plugins::KernelInfo& kernel, const std::string& name,
                           const std::string& fallback) {
  const plugins::NamedValue* a = kernel.attribute(name);
  return a ? plugins::value_text(a->value) : fallback;
}

}  // namespace simprec::validate
