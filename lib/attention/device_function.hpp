// A device function as measured on the device: the GPU's exp2 (ex2.approx.ftz.f32) is not
// correctly rounded, so an emulation that reproduces a kernel bit for bit looks its values up
// in a table of fp32 argument bits -> fp32 result bits, filled by evaluating the kernel's own
// function on the device (run_attention_with_device_function in attention.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

namespace simprec::attention {

class DeviceFunctionTable {
 public:
  void insert(uint32_t argument, uint32_t result) { values_[argument] = result; }
  std::optional<uint32_t> find(uint32_t argument) const {
    const auto it = values_.find(argument);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  size_t size() const { return values_.size(); }

 private:
  std::unordered_map<uint32_t, uint32_t> values_;
};

// Evaluates a device function on fp32 arguments (bit patterns), one result per argument.
using DeviceFunction = std::function<std::vector<uint32_t>(const std::vector<uint32_t>& arguments)>;

}  // namespace simprec::attention
