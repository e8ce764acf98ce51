// What the conversion instructions are expected to compute, written as plain integer code that
// runs on host and device: fp32 -> narrow format, round to nearest even, subnormals kept.
// The exhaustive device comparison counts where the hardware differs from this; the CPU tests
// check the recorded outputs against simprec's own rounding kernel (an independent oracle).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define SIMPREC_HD __host__ __device__
#else
#define SIMPREC_HD
#endif

namespace simprec::kernels {

struct NarrowFormat {
  int exponent_bits, mantissa_bits, bias;
  bool finite_nan;  // e4m3fn: no infinity, all-ones is NaN
  bool saturate;    // .satfinite: overflow and infinity give the largest finite value
  uint32_t nan;     // the NaN the instruction produces (sign not copied)
};

SIMPREC_HD inline int highest_bit64(uint64_t x) {
  int n = 0;
  while (x >>= 1) ++n;
  return n;
}

SIMPREC_HD inline uint32_t rne_narrow(const NarrowFormat& f, uint32_t bits) {
  const uint32_t sign = (bits >> 31) << (f.exponent_bits + f.mantissa_bits);
  const uint32_t mag = bits & 0x7fffffffu;
  const uint32_t exp_ones = (1u << f.exponent_bits) - 1;
  const uint32_t max_finite = f.finite_nan
                                  ? (exp_ones << f.mantissa_bits) | ((1u << f.mantissa_bits) - 2)
                                  : (exp_ones << f.mantissa_bits) - 1;
  const uint32_t infinity = exp_ones << f.mantissa_bits;
  if (mag > 0x7f800000u) return f.nan;
  if (mag == 0x7f800000u) return sign | (f.saturate || f.finite_nan ? max_finite : infinity);
  const uint32_t e = mag >> 23;
  uint64_t sig = e == 0 ? (mag & 0x7fffffu) : ((mag & 0x7fffffu) | 0x800000u);
  const int e2 = e == 0 ? -149 : static_cast<int>(e) - 150;
  if (sig == 0) return sign;
  const int value_exp = e2 + highest_bit64(sig);
  const int emin = 1 - f.bias;
  const int lsb_exp = (value_exp > emin ? value_exp : emin) - f.mantissa_bits;
  const int shift = lsb_exp - e2;
  uint64_t q;
  if (shift <= 0) {
    q = sig << -shift;
  } else if (shift > 40) {
    q = 0;
  } else {
    q = sig >> shift;
    const uint64_t rem = sig & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  uint64_t enc;
  if (q < (uint64_t{1} << f.mantissa_bits) && lsb_exp == emin - f.mantissa_bits) {
    enc = q;  // subnormal (or zero)
  } else {
    enc = (static_cast<uint64_t>(lsb_exp + f.mantissa_bits + f.bias) << f.mantissa_bits) +
          (q - (uint64_t{1} << f.mantissa_bits));
  }
  if (enc > max_finite) enc = f.saturate || f.finite_nan ? max_finite : infinity;
  return sign | static_cast<uint32_t>(enc);
}

inline constexpr NarrowFormat kCvtBf16{8, 7, 127, false, false, 0x7fffu};
inline constexpr NarrowFormat kCvtE4m3Sat{4, 3, 7, true, true, 0x7fu};
inline constexpr NarrowFormat kCvtE5m2Sat{5, 2, 15, false, true, 0x7fu};

struct CvtReference {
  NarrowFormat format;
  SIMPREC_HD uint32_t operator()(uint32_t bits) const { return rne_narrow(format, bits); }
};

}  // namespace simprec::kernels
