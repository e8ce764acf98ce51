#include "emulation/device_math/measured_table.hpp"

#include <lzma.h>

#include <cstring>
#include <stdexcept>
#include <string>

// The compressed tables, embedded by the assembler (no generated source, no file to find at
// run time). SIMPREC_DEVICE_MATH_DIR is this folder, set by CMake.
#define SIMPREC_EMBED(name, file)                                                                 \
  asm(".section .rodata\n.balign 16\n.hidden " #name "\n.globl " #name "\n" #name                 \
      ":\n.incbin \"" SIMPREC_DEVICE_MATH_DIR "/" file "\"\n.hidden " #name "_end\n.globl " #name \
      "_end\n" #name "_end:\n.previous\n")

SIMPREC_EMBED(simprec_sm90_ex2_negative, "sm90_ex2_approx_ftz_negative.delta.xz");
SIMPREC_EMBED(simprec_sm90_ex2_positive, "sm90_ex2_approx_ftz_positive.delta.xz");
SIMPREC_EMBED(simprec_sm90_lg2_mantissa, "sm90_lg2_approx_ftz_mantissa.delta.xz");
SIMPREC_EMBED(simprec_sm90_rcp_mantissa, "sm90_rcp_approx_ftz_mantissa.delta.xz");

extern "C" const uint8_t simprec_sm90_ex2_negative[], simprec_sm90_ex2_negative_end[];
extern "C" const uint8_t simprec_sm90_ex2_positive[], simprec_sm90_ex2_positive_end[];
extern "C" const uint8_t simprec_sm90_lg2_mantissa[], simprec_sm90_lg2_mantissa_end[];
extern "C" const uint8_t simprec_sm90_rcp_mantissa[], simprec_sm90_rcp_mantissa_end[];

namespace simprec::device_math {

std::vector<uint32_t> decode_measured_table(MeasuredTable table) {
  struct Embedded {
    const uint8_t *begin, *end;
    const char* name;
  };
  const Embedded e = [table]() -> Embedded {
    switch (table) {
      case MeasuredTable::kSm90Ex2Negative:
        return {simprec_sm90_ex2_negative, simprec_sm90_ex2_negative_end,
                "sm90 ex2.approx (x < 0)"};
      case MeasuredTable::kSm90Ex2Positive:
        return {simprec_sm90_ex2_positive, simprec_sm90_ex2_positive_end,
                "sm90 ex2.approx (x >= 0)"};
      case MeasuredTable::kSm90Lg2Mantissa:
        return {simprec_sm90_lg2_mantissa, simprec_sm90_lg2_mantissa_end, "sm90 lg2.approx"};
      case MeasuredTable::kSm90RcpMantissa:
        return {simprec_sm90_rcp_mantissa, simprec_sm90_rcp_mantissa_end, "sm90 rcp.approx"};
    }
    throw std::logic_error("unknown measured table");
  }();
  const uint8_t* begin = e.begin;
  const uint8_t* end = e.end;
  const char* name = e.name;
  constexpr size_t kEntries = size_t{1} << 23;
  std::vector<int32_t> deltas(kEntries);
  uint64_t memlimit = UINT64_MAX;
  size_t in_pos = 0, out_pos = 0;
  const lzma_ret r = lzma_stream_buffer_decode(
      &memlimit, 0, nullptr, begin, &in_pos, static_cast<size_t>(end - begin),
      reinterpret_cast<uint8_t*>(deltas.data()), &out_pos, kEntries * sizeof(int32_t));
  if (r != LZMA_OK || out_pos != kEntries * sizeof(int32_t)) {
    throw std::runtime_error(std::string(name) + " table: the embedded data does not decompress (" +
                             std::to_string(static_cast<int>(r)) + ", " + std::to_string(out_pos) +
                             " bytes)");
  }
  std::vector<uint32_t> bits(kEntries);
  uint32_t value = 0;
  for (size_t i = 0; i < kEntries; ++i) bits[i] = value += static_cast<uint32_t>(deltas[i]);
  return bits;
}

}  // namespace simprec::device_math
