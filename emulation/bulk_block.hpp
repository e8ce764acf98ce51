// The vectorised integer kernel behind the bulk API (bulk.cpp): one block of float or double
// inputs rounded to a narrower format, out as encodings or as the rounded values in the input's
// own type. Elements it cannot finish (NaN and infinity inputs, flushed subnormals, and deep
// underflow under stochastic rounding) are reported for the scalar kernel to redo. Internal to
// the emulation library.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "emulation/format.hpp"
#include "emulation/round.hpp"
#include "emulation/rounding_mode.hpp"

namespace simprec::bulk_detail {

template <class In>
struct IeeeLayout;
template <>
struct IeeeLayout<float> {
  using U = uint32_t;
  static constexpr int kWidth = 32, kMantissa = 23, kBias = 127;
};
template <>
struct IeeeLayout<double> {
  using U = uint64_t;
  static constexpr int kWidth = 64, kMantissa = 52, kBias = 1023;
};

// The kernel handles inputs whose exponent range covers the target's (so that target
// subnormals come from input normals and input subnormals land below the target's range) and
// targets with fewer mantissa bits than the input.
template <class In>
bool fast_path_applies(const Format& f) {
  using L = IeeeLayout<In>;
  // The kernel works in the input's lane width, sign bit included: a wider target (possible
  // with a custom bias, e.g. 1+10+22 bits from float) would lose its sign bit there.
  // Exponent-only formats (no sign, no zero, field 0 normal) take the scalar kernel.
  return f.has_sign() && f.mantissa_bits < L::kMantissa && f.emin() >= 1 - L::kBias &&
         f.width() <= L::kWidth;
}

// The target shares the input's exponent field (bf16 and tf32 from float): every finite input,
// subnormals included, keeps its exponent and only mantissa bits are dropped.
template <class In>
bool same_exponent_range(const Format& f) {
  using L = IeeeLayout<In>;
  return f.exponent_bits == L::kWidth - 1 - L::kMantissa && f.bias == L::kBias &&
         f.keeps_subnormals();
}

// Constants of one (input type, target format, rounding mode) triple.
template <class In>
struct Plan {
  using L = IeeeLayout<In>;
  using U = typename L::U;
  int shift_normal;     // input mantissa bits dropped for a normal result
  int64_t emin_biased;  // input biased exponent of the target's smallest normal
  U rebias;             // subtracting it moves the exponent field to the target's bias
  U max_bits;           // target's largest finite magnitude encoding
  uint64_t sign_out;    // target sign bit
  bool unsigned_zero;   // fnuz: a negative zero result is +0
  bool flush;           // subnormal results go through the scalar kernel
  // What a result beyond the largest finite value becomes, by sign: IEEE 754 and the format's
  // overflow policy make it depend on the mode and the sign only, so the scalar kernel's answer
  // for one far-out value stands for all. As an encoding, and as its value in In's layout.
  U overflow_bits[2];
  U overflow_value[2];
  U min_subnormal_value;  // the target's smallest subnormal in In's layout (0 if it has none)
  // For a target of the input's exponent range: the least rounded magnitude q that overflows or
  // that an infinite or NaN input (exponent field all ones) can give. Rounding never goes below
  // truncation, so such an input has q >= its field shifted to the target's, and neither kind
  // exists where q is below this.
  U first_unusual;
  Plan(const Format& f, RoundingMode mode)
      : shift_normal(L::kMantissa - f.mantissa_bits),
        emin_biased(f.emin() + L::kBias),
        rebias(static_cast<U>(static_cast<U>(L::kBias - f.bias) << L::kMantissa)),
        max_bits(static_cast<U>(f.max_finite_bits())),
        sign_out(f.sign_mask()),
        unsigned_zero(!f.has_negative_zero()),
        flush(!f.keeps_subnormals()) {
    // The values are read only where the caller found that every value of the format fits In.
    const auto value_bits = [&](uint64_t bits) -> U {
      const double v = decode(f, bits);
      if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<In>::max()) return 0;
      return std::bit_cast<U>(static_cast<In>(v));
    };
    for (int negative = 0; negative < 2; ++negative) {
      const uint64_t bits =
          round_to_format(f, Unrounded::finite(negative != 0, f.emax() + 2, 1), Rounding{mode}, 0);
      overflow_bits[negative] = static_cast<U>(bits);
      overflow_value[negative] = value_bits(bits);
    }
    min_subnormal_value = f.keeps_subnormals() ? value_bits(1) : 0;
    constexpr U kExpAllOnes = (U{1} << (L::kWidth - 1 - L::kMantissa)) - 1;
    first_unusual = same_exponent_range<In>(f) && f.mantissa_bits < L::kMantissa
                        ? std::min<U>(max_bits + 1, kExpAllOnes << f.mantissa_bits)
                        : 0;
  }
};

// Rounds n elements. Out is an unsigned integer type for encodings, or In for values (each the
// exact value of its encoding, which the caller has checked In can hold). `fix[i]` is set, when
// kMarkFixes, where the scalar kernel must redo element i; returns whether any element needs it
// (without kMarkFixes, for a target of the input's range: whether any element may need it or
// overflows, see below; the marking pass must then run).
// `random[i]` is element i's random word (random modes only).
template <RoundingMode M, bool kSameRange, bool kMarkFixes, class In, class Out>
bool round_block(const Plan<In>& p, const In* in, Out* out, uint8_t* fix, size_t n,
                 const uint32_t* random, int sr_bits) {
  using L = IeeeLayout<In>;
  using U = typename L::U;
  constexpr bool kValues = std::is_same_v<In, Out>;
  constexpr bool kRandom = M == RoundingMode::kStochastic;
  constexpr bool kNearest = M == RoundingMode::kNearestEven || M == RoundingMode::kNearestAway ||
                            M == RoundingMode::kNearestRandomTies;
  constexpr U kAbs = (U{1} << (L::kWidth - 1)) - 1;
  constexpr U kFrac = (U{1} << L::kMantissa) - 1;
  constexpr U kExpAllOnes = (U{1} << (L::kWidth - 1 - L::kMantissa)) - 1;
  const U keep_mask = sr_bits >= 32 ? ~U{0} : ~((U{1} << (32 - sr_bits)) - 1) & 0xffffffffu;
  // Written without short-circuit operators so that the loop is a straight line the compiler
  // vectorises; all arithmetic stays in the input's lane width.
  using S = std::make_signed_t<U>;
  const S emin_biased = static_cast<S>(p.emin_biased);
  const S shift_normal = p.shift_normal;
  const U unsigned_zero = p.unsigned_zero;
  const U flush = p.flush;
  const U sign_shift = static_cast<U>(std::countr_zero(p.sign_out));
  U any_special = 0;
  for (size_t i = 0; i < n; ++i) {
    U x;
    std::memcpy(&x, in + i, sizeof x);
    const U a = x & kAbs;
    const U negative = x >> (L::kWidth - 1);
    const U field = a >> L::kMantissa;
    const U field_eff = field + static_cast<U>(field == 0);
    const U sig = (a & kFrac) | (static_cast<U>(field != 0) << L::kMantissa);
    U normal, tiny, s, base;
    if constexpr (kSameRange) {
      normal = 1;
      tiny = 0;
      s = static_cast<U>(shift_normal);
      base = a;
    } else {
      const S d = emin_biased - static_cast<S>(field_eff);
      normal = static_cast<U>(d <= 0);
      const S s_sub = shift_normal + d;
      tiny = static_cast<U>(s_sub > L::kMantissa + 1);
      const S s_clamped = s_sub < L::kMantissa + 1 ? s_sub : L::kMantissa + 1;
      s = static_cast<U>(normal ? shift_normal : s_clamped);
      base = normal ? a - p.rebias : sig;
    }
    const U unit = U{1} << s;
    U q;
    if constexpr (M == RoundingMode::kNearestEven) {
      q = (base + (unit / 2 - 1) + ((base >> s) & 1)) >> s;
    } else if constexpr (M == RoundingMode::kNearestAway) {
      q = (base + unit / 2) >> s;
    } else if constexpr (M == RoundingMode::kTowardZero) {
      q = base >> s;
    } else if constexpr (M == RoundingMode::kUp) {
      q = (base + ((unit - 1) & (negative - 1))) >> s;
    } else if constexpr (M == RoundingMode::kDown) {
      q = (base + ((unit - 1) & (U{0} - negative))) >> s;
    } else if constexpr (M == RoundingMode::kOdd) {
      q = (base >> s) | static_cast<U>((base & (unit - 1)) != 0);
    } else if constexpr (M == RoundingMode::kStochastic) {
      // The top sr_bits of a 32-bit word, scaled to the s dropped bits (see round.cpp).
      const U r = static_cast<U>(random[i] & keep_mask);
      U scaled;
      if constexpr (L::kWidth == 32) {
        scaled = r >> (32 - s);
      } else {
        scaled = (r << 32) >> (64 - s);
      }
      q = (base + scaled) >> s;
    } else {  // kNearestRandomTies
      q = (base + (unit / 2 - 1) + (random[i] & 1)) >> s;
    }
    // Below half the smallest subnormal (tiny), s is clamped. The directed modes and odd still
    // give the right 0 or 1 from the clamped shift (1 exactly when the input is nonzero), but a
    // nearest mode must give 0: the value is under half a unit, so no tie is possible.
    if constexpr (kNearest) q &= tiny - 1;
    U overflow, special;
    if constexpr (kSameRange && !kMarkFixes) {
      // First pass over a target of the input's range (bf16, tf32): one comparison finds both
      // overflows and infinite or NaN inputs, and a block with either is rounded again by the
      // marking pass, which finishes overflows here and leaves the rest to the scalar kernel.
      // The other elements need neither, which spares most of the loop's work.
      overflow = 0;
      special = static_cast<U>(q >= p.first_unusual);
    } else {
      overflow = static_cast<U>(q > p.max_bits);
      // A flushed target also sends input subnormals (field 0) to the scalar kernel: where the
      // target's emin equals the input's, they count as normal. A target of the input's range
      // keeps subnormals (same_exponent_range), so has none to flush.
      const U flushed = kSameRange ? 0 : flush & ((normal ^ 1) | static_cast<U>(field == 0));
      special = static_cast<U>(field == kExpAllOnes) | (kRandom ? tiny : 0) | flushed;
    }
    if constexpr (kMarkFixes) fix[i] = static_cast<uint8_t>(special);
    any_special |= special;
    if constexpr (kValues) {
      // The encoding's value in the input's layout. A normal result undoes the rebias. A
      // subnormal one is q units of the target's quantum, which is 2^s units of the input's
      // last place at this input's exponent: q << s (at most 2^(mantissa + 1), s <= mantissa
      // + 1) as a significand at that exponent, whose carry into the field is the binade step.
      U magnitude;
      if constexpr (kSameRange) {
        magnitude = q << s;
      } else {
        const U from_normal = (q << shift_normal) + p.rebias;
        const U from_subnormal =
            (((field_eff - 1) << L::kMantissa) + (q << s)) & (U{0} - static_cast<U>(q != 0));
        const U from_tiny = p.min_subnormal_value & (U{0} - q);  // q is 0 or 1 here
        magnitude = normal ? from_normal : tiny ? from_tiny : from_subnormal;
      }
      const U overflow_value = static_cast<S>(x) < 0 ? p.overflow_value[1] : p.overflow_value[0];
      const U sign_bit = unsigned_zero & static_cast<U>(q == 0) ? 0 : x & ~kAbs;
      const U bits = overflow ? overflow_value : magnitude | sign_bit;
      std::memcpy(out + i, &bits, sizeof bits);
    } else {
      const U sign = negative & ~(unsigned_zero & static_cast<U>(q == 0));
      const U overflow_bits = negative ? p.overflow_bits[1] : p.overflow_bits[0];
      out[i] = static_cast<Out>(overflow ? overflow_bits : q | (sign << sign_shift));
    }
  }
  return any_special != 0;
}

}  // namespace simprec::bulk_detail
