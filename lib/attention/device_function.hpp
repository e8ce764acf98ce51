// Device functions supplied by the caller: the fp32 exp2, exp, log, log2, reciprocal and division
// a kernel really calls (the GPU's ex2.approx, a C library's expf, numpy's np.exp, ...), which
// an emulation that reproduces the kernel bit for bit evaluates where the kernel does. Their
// values live in tables of fp32 argument bits -> fp32 result bits, filled by evaluating the
// supplied function on every argument a run meets, in one batched call per function
// (run_attention_with_device_functions in attention.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace simprec::attention {

// The functions a caller may supply. rcp is the kernel's 1/x, div its x/y (two arguments).
enum class DeviceFn : uint8_t { kExp2, kExp, kLog, kLog2, kRcp, kDiv };
inline constexpr int kDeviceFnCount = 6;
inline constexpr std::array<DeviceFn, kDeviceFnCount> kDeviceFns = {
    DeviceFn::kExp2, DeviceFn::kExp, DeviceFn::kLog,
    DeviceFn::kLog2, DeviceFn::kRcp, DeviceFn::kDiv};

// "exp2", "exp", "log", "log2", "rcp", "div".
std::string_view device_fn_name(DeviceFn fn);
// Throws std::invalid_argument listing the names.
DeviceFn parse_device_fn(std::string_view name);

// The table key of an argument: its fp32 bits; for div, x's bits in the high half and y's in the
// low half.
inline uint64_t device_key(uint32_t x) {
  return x;
}
inline uint64_t device_key(uint32_t x, uint32_t y) {
  return (uint64_t{x} << 32) | y;
}

class DeviceFunctionTable {
 public:
  void insert(uint64_t key, uint32_t result) { values_[key] = result; }
  std::optional<uint32_t> find(uint64_t key) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  size_t size() const { return values_.size(); }

 private:
  std::unordered_map<uint64_t, uint32_t> values_;
};

// One table per supplied function (nullptr: not supplied).
using DeviceFunctionTables = std::array<std::shared_ptr<const DeviceFunctionTable>, kDeviceFnCount>;
// Per function, the keys a run looked up and did not find (sorted, unique).
using DeviceMisses = std::array<std::vector<uint64_t>, kDeviceFnCount>;

// Evaluates a device function on fp32 arguments (bit patterns), one result per argument.
using DeviceFunction = std::function<std::vector<uint32_t>(const std::vector<uint32_t>& arguments)>;
// Evaluates x / y elementwise (bit patterns), one result per pair.
using DeviceDivision = std::function<std::vector<uint32_t>(const std::vector<uint32_t>& x,
                                                           const std::vector<uint32_t>& y)>;

// The functions a caller supplies; an empty one is not supplied.
struct DeviceFunctions {
  DeviceFunction exp2, exp, log, log2, rcp;
  DeviceDivision div;
  bool empty() const { return !exp2 && !exp && !log && !log2 && !rcp && !div; }
  bool has(DeviceFn fn) const;
};

}  // namespace simprec::attention
