// An exact (or sticky-jammed) value on its way to being rounded into a format.
#pragma once

#include <cstdint>

namespace simprec {

using uint128 = unsigned __int128;

// value = (-1)^negative * significand * 2^exponent when kind is kFinite.
// Producers may "jam" bits they drop into bit 0 (set it when anything nonzero was dropped);
// that is exact for rounding as long as at least precision + sr_bits + 2 bits stand above it,
// which every producer in this library guarantees (significands are kept at >= 90 bits).
struct Unrounded {
  enum class Kind : uint8_t { kZero, kFinite, kInfinity, kNan };
  Kind kind = Kind::kZero;
  bool negative = false;
  int64_t exponent = 0;
  uint128 significand = 0;

  static constexpr Unrounded zero(bool negative) { return {Kind::kZero, negative, 0, 0}; }
  static constexpr Unrounded infinity(bool negative) { return {Kind::kInfinity, negative, 0, 0}; }
  static constexpr Unrounded nan() { return {Kind::kNan, false, 0, 0}; }
  static constexpr Unrounded finite(bool negative, int64_t exponent, uint128 significand) {
    return significand == 0 ? zero(negative)
                            : Unrounded{Kind::kFinite, negative, exponent, significand};
  }
  bool is_finite_nonzero() const { return kind == Kind::kFinite; }
};

// Index of the highest set bit; x must be nonzero.
inline int highest_bit(uint128 x) {
  const auto hi = static_cast<uint64_t>(x >> 64);
  return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll(static_cast<uint64_t>(x));
}

// x >> n with every dropped one-bit jammed into bit 0 of the result; any n >= 0.
inline uint128 shift_right_jam(uint128 x, int64_t n) {
  if (n <= 0) return x;
  if (n >= 128) return x != 0;
  const uint128 dropped = x & ((uint128{1} << n) - 1);
  return (x >> n) | (dropped != 0);
}

Unrounded unrounded_from_double(double x);
Unrounded unrounded_from_float(float x);

}  // namespace simprec
