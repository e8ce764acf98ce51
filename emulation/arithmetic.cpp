#include "emulation/arithmetic.hpp"

#include <utility>

namespace simprec {
namespace {

using Kind = Unrounded::Kind;

// The most significant bit position operands are aligned to in additions: leaves room for
// the carry (bit 126) while keeping >= 120 bits of each operand's scale.
constexpr int kAlignBit = 125;

bool is_nan(const Unrounded& x) {
  return x.kind == Kind::kNan;
}

// Sign of an exact zero sum: -0 only for (-0) + (-0), or in round-down mode (IEEE 754 6.3).
Unrounded zero_sum(bool a_negative, bool b_negative, RoundingMode mode) {
  if (a_negative == b_negative) return Unrounded::zero(a_negative);
  return Unrounded::zero(mode == RoundingMode::kDown);
}

}  // namespace

Unrounded exact_add(const Unrounded& a, const Unrounded& b, RoundingMode mode) {
  if (is_nan(a) || is_nan(b)) return Unrounded::nan();
  if (a.kind == Kind::kInfinity || b.kind == Kind::kInfinity) {
    if (a.kind == Kind::kInfinity && b.kind == Kind::kInfinity && a.negative != b.negative) {
      return Unrounded::nan();
    }
    return a.kind == Kind::kInfinity ? a : b;
  }
  if (a.kind == Kind::kZero && b.kind == Kind::kZero) return zero_sum(a.negative, b.negative, mode);
  if (a.kind == Kind::kZero) return b;
  if (b.kind == Kind::kZero) return a;

  // Put the operand with the larger top exponent first and align both to its scale.
  const Unrounded* big = &a;
  const Unrounded* small = &b;
  if (b.exponent + highest_bit(b.significand) > a.exponent + highest_bit(a.significand)) {
    std::swap(big, small);
  }
  const int big_shift = kAlignBit - highest_bit(big->significand);
  const int64_t scale = big->exponent - big_shift;
  const uint128 big_sig = big->significand << big_shift;
  // The smaller one's top bit is at most kAlignBit; below bit 0 it jams. When it jams, the
  // exponent gap is > 20 bits, so cancellation removes at most one bit: >= 120 bits stay exact.
  const int64_t small_shift = small->exponent - scale;
  const uint128 small_sig = small_shift >= 0 ? small->significand << small_shift
                                             : shift_right_jam(small->significand, -small_shift);
  if (big->negative == small->negative) {
    return Unrounded::finite(big->negative, scale, big_sig + small_sig);
  }
  if (big_sig == small_sig) return zero_sum(big->negative, small->negative, mode);
  if (big_sig > small_sig) return Unrounded::finite(big->negative, scale, big_sig - small_sig);
  return Unrounded::finite(small->negative, scale, small_sig - big_sig);
}

Unrounded exact_mul(const Unrounded& a, const Unrounded& b) {
  const bool negative = a.negative != b.negative;
  if (is_nan(a) || is_nan(b)) return Unrounded::nan();
  if (a.kind == Kind::kInfinity || b.kind == Kind::kInfinity) {
    if (a.kind == Kind::kZero || b.kind == Kind::kZero) return Unrounded::nan();
    return Unrounded::infinity(negative);
  }
  if (a.kind == Kind::kZero || b.kind == Kind::kZero) return Unrounded::zero(negative);
  // Both significands have at most 53 bits here, so the product fits in 106.
  return Unrounded::finite(negative, a.exponent + b.exponent, a.significand * b.significand);
}

Unrounded exact_fma(const Unrounded& a, const Unrounded& b, const Unrounded& c, RoundingMode mode) {
  return exact_add(exact_mul(a, b), c, mode);
}

Unrounded jammed_div(const Unrounded& a, const Unrounded& b) {
  const bool negative = a.negative != b.negative;
  if (is_nan(a) || is_nan(b)) return Unrounded::nan();
  if (a.kind == Kind::kInfinity) {
    return b.kind == Kind::kInfinity ? Unrounded::nan() : Unrounded::infinity(negative);
  }
  if (b.kind == Kind::kInfinity) return Unrounded::zero(negative);
  if (b.kind == Kind::kZero) {
    return a.kind == Kind::kZero ? Unrounded::nan() : Unrounded::infinity(negative);
  }
  if (a.kind == Kind::kZero) return Unrounded::zero(negative);
  // Long division in two steps of 64 bits each: first the integer quotient of a shifted so
  // that it has ~62 bits, then 64 more bits from the remainder.
  const uint128 divisor = b.significand;  // <= 53 bits
  const int shift = highest_bit(divisor) + 62 - highest_bit(a.significand);
  const uint128 numerator =
      shift >= 0 ? a.significand << shift : shift_right_jam(a.significand, -shift);
  const uint128 q_hi = numerator / divisor;
  const uint128 r_hi = numerator % divisor;
  const uint128 q_lo = (r_hi << 64) / divisor;
  const uint128 r_lo = (r_hi << 64) % divisor;
  const uint128 quotient = (q_hi << 64) | q_lo | (r_lo != 0);
  return Unrounded::finite(negative, a.exponent - shift - b.exponent - 64, quotient);
}

Unrounded jammed_sqrt(const Unrounded& a) {
  if (is_nan(a)) return Unrounded::nan();
  if (a.kind == Kind::kZero) return a;  // sqrt(-0) = -0
  if (a.negative) return Unrounded::nan();
  if (a.kind == Kind::kInfinity) return a;
  // Bit-by-bit (restoring) square root over the significand followed by zeros: 96 root bits.
  uint128 sig = a.significand;
  int64_t exponent = a.exponent;
  if (exponent & 1) {  // make the exponent even so that it halves exactly
    sig <<= 1;
    --exponent;
  }
  // Consume the significand as pairs of bits from the top, padded to an even length.
  int bits = highest_bit(sig) + 1;
  bits += bits & 1;
  constexpr int kRootBits = 96;
  uint128 root = 0, rem = 0;
  for (int i = 0; i < kRootBits; ++i) {
    const int pos = bits - 2 * (i + 1);  // position of the next pair in the padded input
    const uint128 pair = pos >= 0 ? (sig >> pos) & 3 : 0;
    rem = (rem << 2) | pair;
    const uint128 trial = (root << 2) | 1;
    root <<= 1;
    if (rem >= trial) {
      rem -= trial;
      root |= 1;
    }
  }
  // root = floor(sqrt(sig * 4^(kRootBits - bits/2))).
  const int64_t root_exponent = (exponent - 2 * (kRootBits - bits / 2)) / 2;
  return Unrounded::finite(false, root_exponent, root | (rem != 0));
}

uint64_t add(RoundingContext& ctx, uint64_t a, uint64_t b) {
  const Format& f = ctx.format();
  return ctx.round(exact_add(unpack(f, a), unpack(f, b), ctx.rounding().mode));
}

uint64_t sub(RoundingContext& ctx, uint64_t a, uint64_t b) {
  const Format& f = ctx.format();
  Unrounded nb = unpack(f, b);
  nb.negative = !nb.negative;
  return ctx.round(exact_add(unpack(f, a), nb, ctx.rounding().mode));
}

uint64_t mul(RoundingContext& ctx, uint64_t a, uint64_t b) {
  const Format& f = ctx.format();
  return ctx.round(exact_mul(unpack(f, a), unpack(f, b)));
}

uint64_t div(RoundingContext& ctx, uint64_t a, uint64_t b) {
  const Format& f = ctx.format();
  return ctx.round(jammed_div(unpack(f, a), unpack(f, b)));
}

uint64_t fma(RoundingContext& ctx, uint64_t a, uint64_t b, uint64_t c) {
  const Format& f = ctx.format();
  return ctx.round(exact_fma(unpack(f, a), unpack(f, b), unpack(f, c), ctx.rounding().mode));
}

uint64_t sqrt(RoundingContext& ctx, uint64_t a) {
  return ctx.round(jammed_sqrt(unpack(ctx.format(), a)));
}

uint64_t negate(const Format& f, uint64_t a) {
  if (f.is_nan_bits(a)) return a;
  if (!f.has_sign()) return f.nan_bits();  // every value is positive: -x does not exist
  if (!f.has_negative_zero() && (a & f.magnitude_mask()) == 0) return a;
  return a ^ f.sign_mask();
}

uint64_t convert(const Format& from, uint64_t bits, RoundingContext& to) {
  return to.round(unpack(from, bits));
}

}  // namespace simprec
