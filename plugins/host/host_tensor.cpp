#include "plugins/host/host_tensor.hpp"

#include <cstring>
#include <span>
#include <stdexcept>

#include "emulation/format.hpp"
#include "lib/limits/checked_arithmetic.hpp"

namespace simprec::plugins {

StorageType storage_for_format(const std::string& format) {
  const Format f = parse_format(format);
  if (f.exponent_bits == 11 && f.mantissa_bits == 52) return {{kDLFloat, 64, 1}, 8};
  // tf32 has no storage type of its own: it travels as fp32 with the low bits clear.
  if (f.exponent_bits == 8 && (f.mantissa_bits == 23 || f.mantissa_bits == 10)) {
    return {{kDLFloat, 32, 1}, 4};
  }
  if (f.width() <= 8) return {{kDLUInt, 8, 1}, 1};
  if (f.width() <= 16) return {{kDLUInt, 16, 1}, 2};
  if (f.width() <= 32) return {{kDLUInt, 32, 1}, 4};
  return {{kDLUInt, 64, 1}, 8};
}

std::string dtype_text(DLDataType dtype) {
  std::string code;
  switch (dtype.code) {
    case kDLInt:
      code = "int";
      break;
    case kDLUInt:
      code = "uint";
      break;
    case kDLFloat:
      code = "float";
      break;
    case kDLBfloat:
      code = "bfloat";
      break;
    default:
      code = "code";
      code += std::to_string(dtype.code);
      code += "_";
  }
  code += std::to_string(dtype.bits);
  if (dtype.lanes != 1) code.append("x").append(std::to_string(dtype.lanes));
  return code;
}

int64_t HostTensor::element_count() const {
  int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

HostTensor HostTensor::zeros(std::string name, std::string format, std::vector<int64_t> shape) {
  HostTensor t{std::move(name), std::move(format), std::move(shape), {}};
  for (const auto d : t.shape) {
    if (d < 0)
      throw std::invalid_argument("tensor '" + t.name + "': negative dimension in " +
                                  shape_text(t.shape));
  }
  // The shape comes from user options (--dim) and plugin descriptions: its size is checked.
  std::vector<int64_t> factors = t.shape;
  factors.push_back(static_cast<int64_t>(storage_for_format(t.format).bytes));
  const int64_t bytes =
      limits::checked_product(std::span<const int64_t>(factors),
                              "tensor '" + t.name + "' " + shape_text(t.shape) + " bytes");
  t.bytes.assign(static_cast<size_t>(bytes), 0);
  return t;
}

uint64_t HostTensor::bits_at(int64_t i) const {
  const size_t width = bytes.size() / static_cast<size_t>(element_count());
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data() + static_cast<size_t>(i) * width, width);  // little endian
  return bits;
}

void HostTensor::set_bits_at(int64_t i, uint64_t bits) {
  const size_t width = bytes.size() / static_cast<size_t>(element_count());
  std::memcpy(bytes.data() + static_cast<size_t>(i) * width, &bits, width);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

DLTensor dl_tensor_view(HostTensor& tensor) {
  DLTensor view{};
  view.data = tensor.bytes.data();
  view.device = {kDLCPU, 0};
  view.ndim = static_cast<int32_t>(tensor.shape.size());
  view.dtype = storage_for_format(tensor.format).dtype;
  view.shape = tensor.shape.data();
  view.strides = nullptr;  // C-contiguous
  view.byte_offset = 0;
  return view;
}

}  // namespace simprec::plugins
