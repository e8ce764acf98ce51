#include "emulation/exact_accumulator.hpp"

#include <algorithm>
#include <stdexcept>

namespace simprec {

void ExactAccumulator::add(double x) {
  add(unrounded_from_double(x));
}

void ExactAccumulator::add_product(double a, double b) {
  const Unrounded ua = unrounded_from_double(a), ub = unrounded_from_double(b);
  using Kind = Unrounded::Kind;
  if (ua.kind == Kind::kNan || ub.kind == Kind::kNan) {
    ++nan_;
    return;
  }
  const bool negative = ua.negative != ub.negative;
  if (ua.kind == Kind::kInfinity || ub.kind == Kind::kInfinity) {
    if (ua.kind == Kind::kZero || ub.kind == Kind::kZero) {
      ++nan_;
    } else {
      ++(negative ? neg_inf_ : pos_inf_);
    }
    return;
  }
  if (ua.kind == Kind::kZero || ub.kind == Kind::kZero) return;
  add_magnitude(ua.significand * ub.significand, ua.exponent + ub.exponent, negative);
}

void ExactAccumulator::add(const Unrounded& x) {
  switch (x.kind) {
    case Unrounded::Kind::kNan:
      ++nan_;
      return;
    case Unrounded::Kind::kInfinity:
      ++(x.negative ? neg_inf_ : pos_inf_);
      return;
    case Unrounded::Kind::kZero:
      return;
    case Unrounded::Kind::kFinite:
      add_magnitude(x.significand, x.exponent, x.negative);
  }
}

void ExactAccumulator::add_magnitude(uint128 sig, int64_t exponent, bool negative) {
  const int64_t position = exponent - kLowest;
  if (position < 0 || position + highest_bit(sig) >= 64 * kLimbs - 100) {
    throw std::out_of_range("ExactAccumulator: term outside the accumulator's range");
  }
  const auto limb = static_cast<size_t>(position / 64);
  const int shift = static_cast<int>(position % 64);
  // sig << shift spans up to three limbs.
  uint64_t parts[3] = {
      static_cast<uint64_t>(sig) << shift,
      shift ? static_cast<uint64_t>(sig >> (64 - shift)) : static_cast<uint64_t>(sig >> 64),
      shift ? static_cast<uint64_t>((sig >> 64) >> (64 - shift)) : 0};
  if (!negative) {
    uint64_t carry = 0;
    for (size_t i = limb; i < kLimbs; ++i) {
      const uint64_t addend = i - limb < 3 ? parts[i - limb] : 0;
      if (i - limb >= 3 && carry == 0) break;
      const uint128 t = uint128{limbs_[i]} + addend + carry;
      limbs_[i] = static_cast<uint64_t>(t);
      carry = static_cast<uint64_t>(t >> 64);
    }
  } else {
    uint64_t borrow = 0;
    for (size_t i = limb; i < kLimbs; ++i) {
      const uint64_t subtrahend = i - limb < 3 ? parts[i - limb] : 0;
      if (i - limb >= 3 && borrow == 0) break;
      const uint128 t = uint128{limbs_[i]} - subtrahend - borrow;
      limbs_[i] = static_cast<uint64_t>(t);
      borrow = static_cast<uint64_t>(t >> 64) ? 1 : 0;
    }
  }
}

Unrounded ExactAccumulator::exact_sum() const {
  if (nan_ || (pos_inf_ && neg_inf_)) return Unrounded::nan();
  if (pos_inf_) return Unrounded::infinity(false);
  if (neg_inf_) return Unrounded::infinity(true);
  std::array<uint64_t, kLimbs> mag = limbs_;
  const bool negative = mag[kLimbs - 1] >> 63;
  if (negative) {  // two's complement negation
    uint64_t carry = 1;
    for (auto& w : mag) {
      const uint128 t = uint128{~w} + carry;
      w = static_cast<uint64_t>(t);
      carry = static_cast<uint64_t>(t >> 64);
    }
  }
  int top = kLimbs - 1;
  while (top >= 0 && mag[top] == 0) --top;
  if (top < 0) return Unrounded::zero(false);
  // Keep the 126 bits from the leading one down and jam everything below into a sticky bit.
  const int64_t msb = int64_t{64} * top + (63 - __builtin_clzll(mag[top]));
  const int64_t lo = std::max<int64_t>(0, msb - 125);
  const auto word_at = [&mag](int64_t pos) -> uint64_t {  // 64 bits starting at bit pos
    const auto i = static_cast<size_t>(pos / 64);
    const int r = static_cast<int>(pos % 64);
    const uint64_t low = i < mag.size() ? mag[i] >> r : 0;
    const uint64_t high = (r && i + 1 < mag.size()) ? mag[i + 1] << (64 - r) : 0;
    return low | high;
  };
  uint128 sig = (uint128{word_at(lo + 64)} << 64) | word_at(lo);
  sig &= (uint128{1} << (msb - lo + 1)) - 1;
  bool sticky = false;
  for (int64_t i = 0; i < lo / 64; ++i) sticky |= mag[static_cast<size_t>(i)] != 0;
  if (lo % 64)
    sticky |= (mag[static_cast<size_t>(lo / 64)] & ((uint64_t{1} << (lo % 64)) - 1)) != 0;
  int64_t exponent = lo + kLowest;
  if (sticky) {
    sig = (sig << 1) | 1;
    --exponent;
  }
  return Unrounded::finite(negative, exponent, sig);
}

}  // namespace simprec
