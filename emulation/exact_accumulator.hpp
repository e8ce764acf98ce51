// A long fixed-point accumulator (Kulisch style) that sums doubles and products of doubles
// exactly, whatever their magnitudes and order, so that a sum can be rounded once at the end.
#pragma once

#include <array>
#include <cstdint>

#include "emulation/unrounded.hpp"

namespace simprec {

class ExactAccumulator {
 public:
  void add(double x);
  void add_product(double a, double b);  // a*b exactly, no intermediate rounding
  void add(const Unrounded& x);          // significand up to 120 bits
  // The exact sum (exact_sum().kind is kZero for an exactly zero sum, +0 then).
  Unrounded exact_sum() const;
  void clear() { *this = ExactAccumulator(); }

 private:
  // Bit 0 weighs 2^kLowest: below the lowest bit of a product of two subnormal doubles.
  static constexpr int kLowest = -2200;
  static constexpr int kLimbs = 72;  // 4608 bits: up to 2^2400, headroom for 2^100 carries
  void add_magnitude(uint128 sig, int64_t exponent, bool negative);
  std::array<uint64_t, kLimbs> limbs_{};  // two's complement
  int nan_ = 0, pos_inf_ = 0, neg_inf_ = 0;
};

}  // namespace simprec
