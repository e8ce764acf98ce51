#include "emulation/round.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace simprec {
namespace {

// Attaches the sign; fnuz formats have no -0 (its encoding is their NaN).
uint64_t with_sign(const Format& f, bool negative, uint64_t magnitude) {
  if (!negative || (magnitude == 0 && !f.has_negative_zero())) return magnitude;
  return magnitude | f.sign_mask();
}

// A result beyond the largest finite value. IEEE 754 gives infinity where the mode rounds away
// from zero for this sign and the largest finite value otherwise; the format's overflow policy
// decides what stands in for that infinity.
uint64_t overflow_result(const Format& f, bool negative, RoundingMode mode) {
  bool to_infinity = true;
  switch (mode) {
    case RoundingMode::kTowardZero:
    case RoundingMode::kOdd:
      to_infinity = false;
      break;
    case RoundingMode::kUp:
      to_infinity = !negative;
      break;
    case RoundingMode::kDown:
      to_infinity = negative;
      break;
    default:
      break;
  }
  if (!to_infinity || f.overflow == OverflowPolicy::kSaturate) {
    return with_sign(f, negative, f.max_finite_bits());
  }
  if (f.overflow == OverflowPolicy::kNan || !f.has_infinity()) return f.nan_bits();
  return with_sign(f, negative, f.infinity_bits());
}

// Whether to add one unit to the truncated significand, given the `s` dropped bits `rem`
// (s >= 1; for s > 128 the dropped part is the whole 128-bit significand, below one half).
bool round_up(const Rounding& r, bool negative, uint128 q, uint128 rem, int64_t s,
              uint32_t random) {
  if (rem == 0) return false;
  // Position of rem against one half of the last place.
  int half_cmp = -1;
  if (s <= 128) {
    const uint128 half = uint128{1} << (s - 1);
    half_cmp = rem < half ? -1 : (rem == half ? 0 : 1);
  }
  switch (r.mode) {
    case RoundingMode::kNearestEven:
      return half_cmp > 0 || (half_cmp == 0 && (q & 1));
    case RoundingMode::kNearestAway:
      return half_cmp >= 0;
    case RoundingMode::kNearestRandomTies:
      return half_cmp > 0 || (half_cmp == 0 && (random & 1));
    case RoundingMode::kTowardZero:
    case RoundingMode::kOdd:
      return false;
    case RoundingMode::kUp:
      return !negative;
    case RoundingMode::kDown:
      return negative;
    case RoundingMode::kStochastic: {
      // Compare the top k bits of the dropped fraction with k random bits: up with
      // probability floor(fraction * 2^k) / 2^k, exactly fraction when s <= k.
      const int k = r.sr_bits;
      uint64_t top;
      if (s >= k) {
        const int64_t shift = s - k;
        top = shift >= 128 ? 0 : static_cast<uint64_t>(rem >> shift);
      } else {
        top = static_cast<uint64_t>(rem) << (k - s);
      }
      const uint64_t draw = static_cast<uint64_t>(random) >> (32 - k);
      return top + draw >= (uint64_t{1} << k);
    }
  }
  return false;
}

// Exponent-only formats (E8M0): the value 2^e with e the exponent field minus the bias. They
// have no sign, no zero and no subnormals: negative values are NaN, and zero and everything
// below the smallest value become the smallest value (there is nothing below it to round to).
// With one significant bit both neighbours of a tie are odd; nearest-even then rounds away
// from zero, as MPFR does at precision 1, and round-to-odd is truncation.
uint64_t round_exponent_only(const Format& f, const Unrounded& v, const Rounding& r,
                             uint32_t random) {
  switch (v.kind) {
    case Unrounded::Kind::kNan:
      return f.nan_bits();
    case Unrounded::Kind::kZero:
      return 0;
    case Unrounded::Kind::kInfinity:
      if (v.negative) return f.nan_bits();
      return f.overflow == OverflowPolicy::kSaturate ? f.max_finite_bits() : f.nan_bits();
    case Unrounded::Kind::kFinite:
      break;
  }
  if (v.negative) return f.nan_bits();
  const int msb = highest_bit(v.significand);
  int64_t exponent = v.exponent + msb;  // value in [2^exponent, 2^(exponent+1))
  if (exponent < f.emin()) return 0;
  if (msb > 0) {
    const uint128 dropped = v.significand & ((uint128{1} << msb) - 1);
    if (round_up(r, false, 1, dropped, msb, random)) ++exponent;
  }
  if (exponent > f.emax()) return overflow_result(f, false, r.mode);
  return static_cast<uint64_t>(exponent - f.emin());
}

}  // namespace

uint64_t round_to_format(const Format& f, const Unrounded& v, const Rounding& r, uint32_t random) {
  if (f.special == SpecialEncoding::kExponentOnly) return round_exponent_only(f, v, r, random);
  switch (v.kind) {
    case Unrounded::Kind::kNan:
      return f.nan_bits();
    case Unrounded::Kind::kZero:
      return with_sign(f, v.negative, 0);
    case Unrounded::Kind::kInfinity:
      if (f.overflow == OverflowPolicy::kSaturate)
        return with_sign(f, v.negative, f.max_finite_bits());
      if (f.overflow == OverflowPolicy::kNan || !f.has_infinity()) return f.nan_bits();
      return with_sign(f, v.negative, f.infinity_bits());
    case Unrounded::Kind::kFinite:
      break;
  }
  const int m = f.mantissa_bits;
  const int msb = highest_bit(v.significand);
  const int64_t top_exponent = v.exponent + msb;  // value in [2^top, 2^(top+1))
  if (top_exponent > f.emax() + 1) return overflow_result(f, v.negative, r.mode);

  // Exponent of the last place kept: the normal one, or the subnormal quantum below emin.
  int64_t quantum = top_exponent - m;
  if (top_exponent < f.emin() && f.keeps_subnormals()) quantum = f.emin() - m;

  const int64_t s = quantum - v.exponent;  // bits of the significand to drop
  uint128 q;
  if (s <= 0) {
    q = v.significand << -s;  // exact; -s <= m
  } else {
    q = s >= 128 ? 0 : v.significand >> s;
    const uint128 rem = s >= 128 ? v.significand : v.significand & ((uint128{1} << s) - 1);
    if (round_up(r, v.negative, q, rem, s, random)) {
      ++q;
    } else if (r.mode == RoundingMode::kOdd && rem != 0) {
      q |= 1;
    }
  }
  if (q == 0) return with_sign(f, v.negative, 0);
  if (q == (uint128{1} << (m + 1))) {  // the carry reached the next binade
    q >>= 1;
    ++quantum;
  }
  if (!f.keeps_subnormals() && quantum + highest_bit(q) < f.emin()) {
    return with_sign(f, v.negative, 0);
  }
  // Normal and subnormal encodings share one formula: a subnormal has quantum emin - m and
  // q < 2^m; a normal one adds its exponent field on top of q, whose 2^m bit is the field's 1.
  const auto magnitude =
      (static_cast<uint64_t>(quantum - (f.emin() - m)) << m) + static_cast<uint64_t>(q);
  if (magnitude > f.max_finite_bits()) return overflow_result(f, v.negative, r.mode);
  return with_sign(f, v.negative, magnitude);
}

Unrounded unpack(const Format& f, uint64_t bits) {
  if (f.is_nan_bits(bits)) return Unrounded::nan();
  if (f.special == SpecialEncoding::kExponentOnly) {
    return Unrounded::finite(false, static_cast<int64_t>(bits & f.magnitude_mask()) + f.emin(), 1);
  }
  const bool negative = (bits & f.sign_mask()) != 0;
  if (f.is_infinity_bits(bits)) return Unrounded::infinity(negative);
  const uint64_t mag = bits & f.magnitude_mask();
  const uint64_t field = mag >> f.mantissa_bits;
  const uint64_t fraction = mag & f.mantissa_mask();
  if (field == 0) {
    if (!f.keeps_subnormals()) return Unrounded::zero(negative);
    return Unrounded::finite(negative, f.emin() - f.mantissa_bits, fraction);
  }
  return Unrounded::finite(negative, static_cast<int64_t>(field) - f.bias - f.mantissa_bits,
                           fraction | (uint64_t{1} << f.mantissa_bits));
}

double decode(const Format& f, uint64_t bits) {
  const Unrounded u = unpack(f, bits);
  switch (u.kind) {
    case Unrounded::Kind::kNan:
      return std::numeric_limits<double>::quiet_NaN();
    case Unrounded::Kind::kInfinity:
      return u.negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    case Unrounded::Kind::kZero:
      return u.negative ? -0.0 : 0.0;
    case Unrounded::Kind::kFinite:
      break;
  }
  const double magnitude = std::ldexp(static_cast<double>(static_cast<uint64_t>(u.significand)),
                                      static_cast<int>(u.exponent));
  return u.negative ? -magnitude : magnitude;
}

Unrounded unrounded_from_double(double x) {
  const auto bits = std::bit_cast<uint64_t>(x);
  const bool negative = bits >> 63;
  const uint64_t field = (bits >> 52) & 0x7ff;
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (field == 0x7ff) return fraction ? Unrounded::nan() : Unrounded::infinity(negative);
  if (field == 0) return Unrounded::finite(negative, -1074, fraction);
  return Unrounded::finite(negative, static_cast<int64_t>(field) - 1075,
                           fraction | (uint64_t{1} << 52));
}

Unrounded unrounded_from_float(float x) {
  return unrounded_from_double(static_cast<double>(x));
}

}  // namespace simprec
