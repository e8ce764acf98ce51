// A tensor in host memory as the host keeps it: operand name, simprec format, shape and the raw
// little-endian bytes in the storage type the ABI fixes for that format (see the header:
// fp64/fp32/tf32 as floats, 16- and 8-bit formats as their bit patterns).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace simprec::plugins {

struct StorageType {
  DLDataType dtype;
  size_t bytes;  // per element
};
// The storage of a simprec format name; throws std::invalid_argument for an unknown name.
StorageType storage_for_format(const std::string& format);
std::string dtype_text(DLDataType dtype);  // "float32", "uint16", ...

struct HostTensor {
  std::string name;
  std::string format;  // canonical simprec format name
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t element_count() const;
  // A zero-filled tensor of that shape (throws std::invalid_argument for a bad format).
  static HostTensor zeros(std::string name, std::string format, std::vector<int64_t> shape);
  // Element i as its encoding (fp32 -> float bits, fp64 -> double bits, others the pattern).
  uint64_t bits_at(int64_t i) const;
  void set_bits_at(int64_t i, uint64_t bits);
};

std::string shape_text(const std::vector<int64_t>& shape);  // "[64,32]"

// A DLTensor describing `tensor`, valid while the tensor lives and is not resized.
DLTensor dl_tensor_view(HostTensor& tensor);

}  // namespace simprec::plugins
