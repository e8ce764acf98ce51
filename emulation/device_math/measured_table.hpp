// Tables of device-function values measured on a GPU (kernels/mufu_probe.cu), compiled into
// the library as xz-compressed little-endian int32 deltas of consecutive fp32 bit patterns.
#pragma once

#include <cstdint>
#include <vector>

namespace simprec::device_math {

enum class MeasuredTable {
  kSm90Ex2Negative,  // ex2.approx.ftz.f32(-1 + j * 2^-23), j in [0, 2^23)
  kSm90Ex2Positive,  // ex2.approx.ftz.f32(j * 2^-23), j in [0, 2^23)
  kSm90Lg2Mantissa,  // lg2.approx.ftz.f32(1 + m * 2^-23), m in [0, 2^23)
  kSm90RcpMantissa,  // rcp.approx.ftz.f32(1 + m * 2^-23), m in [0, 2^23)
};

// The table's 2^23 fp32 bit patterns; throws std::runtime_error if the embedded data does not
// decompress to exactly that (a damaged build).
std::vector<uint32_t> decode_measured_table(MeasuredTable table);

}  // namespace simprec::device_math
