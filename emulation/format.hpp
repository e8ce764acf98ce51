// A floating-point format: its bit layout, how it encodes NaN and infinity, and its policies
// for overflow and subnormals. Everything else (limits, special encodings) is derived here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace simprec {

// How the top encodings are spent on NaN and infinity (CUTLASS names IEEE, canonical NaN, none).
enum class SpecialEncoding : uint8_t {
  kIeee,          // exponent all ones: infinity (mantissa zero) or NaN (mantissa nonzero)
  kFiniteNan,     // OCP e4m3fn: only S.1111.111 is NaN; no infinity; the top binade is finite
  kUnsignedZero,  // fnuz: 0x80, the negative-zero slot, is the only NaN; no infinity, no -0
  kNone,          // OCP MX FP6/FP4: every encoding is a finite number; no infinity, no NaN
  kExponentOnly   // OCP E8M0: no sign, no mantissa, no zero: 2^(field - bias); all ones is NaN
};

// What a result beyond the largest finite value becomes, where IEEE 754 would give infinity.
// Formats without infinity refuse kInfinity, formats without NaN refuse kNan (Format::validate).
enum class OverflowPolicy : uint8_t { kInfinity, kSaturate, kNan };

// kFlush: the format has no subnormals; subnormal encodings read as zero, and results whose
// magnitude after rounding (with unbounded exponent range) is below the smallest normal are zero.
enum class SubnormalPolicy : uint8_t { kKeep, kFlush };

namespace detail {
// Exact power of two as a double, usable in constant expressions (std::ldexp is not constexpr).
constexpr double pow2(int e) {
  double r = 1.0;
  for (; e > 0; --e) r *= 2.0;
  for (; e < 0; ++e) r *= 0.5;
  return r;
}
}  // namespace detail

struct Format {
  int exponent_bits = 8;
  int mantissa_bits = 7;
  int bias = 127;
  SpecialEncoding special = SpecialEncoding::kIeee;
  OverflowPolicy overflow = OverflowPolicy::kInfinity;
  SubnormalPolicy subnormals = SubnormalPolicy::kKeep;

  constexpr bool operator==(const Format&) const = default;

  constexpr bool has_sign() const { return special != SpecialEncoding::kExponentOnly; }
  constexpr int width() const { return (has_sign() ? 1 : 0) + exponent_bits + mantissa_bits; }
  constexpr int precision() const { return mantissa_bits + 1; }
  // 0 for the unsigned exponent-only formats.
  constexpr uint64_t sign_mask() const {
    return has_sign() ? uint64_t{1} << (width() - 1) : uint64_t{0};
  }
  constexpr uint64_t magnitude_mask() const {
    return (uint64_t{1} << (exponent_bits + mantissa_bits)) - 1;
  }
  constexpr uint64_t mantissa_mask() const { return (uint64_t{1} << mantissa_bits) - 1; }
  constexpr uint64_t exponent_field_max() const { return (uint64_t{1} << exponent_bits) - 1; }

  constexpr bool has_infinity() const { return special == SpecialEncoding::kIeee; }
  constexpr bool has_nan() const { return special != SpecialEncoding::kNone; }
  constexpr bool has_negative_zero() const {
    return special != SpecialEncoding::kUnsignedZero && special != SpecialEncoding::kExponentOnly;
  }
  constexpr bool keeps_subnormals() const { return subnormals == SubnormalPolicy::kKeep; }

  // Magnitude encoding of the largest finite value.
  constexpr uint64_t max_finite_bits() const {
    switch (special) {
      case SpecialEncoding::kIeee:
        return (exponent_field_max() << mantissa_bits) - 1;
      case SpecialEncoding::kFiniteNan:
        return magnitude_mask() - 1;
      case SpecialEncoding::kUnsignedZero:
      case SpecialEncoding::kNone:
        return magnitude_mask();
      case SpecialEncoding::kExponentOnly:
        return magnitude_mask() - 1;
    }
    return 0;
  }
  // Encoding of +infinity; meaningful only when has_infinity().
  constexpr uint64_t infinity_bits() const { return exponent_field_max() << mantissa_bits; }
  // The canonical NaN this library produces. A format without NaN (kNone) gives +max finite
  // where a NaN would go: the MX spec leaves converting NaN to FP6/FP4 to the implementation,
  // and this is what PTX's cvt .satfinite into e2m1/e2m3/e3m2 does.
  constexpr uint64_t nan_bits() const {
    switch (special) {
      case SpecialEncoding::kIeee:
        return infinity_bits() | (uint64_t{1} << (mantissa_bits - 1));
      case SpecialEncoding::kFiniteNan:
      case SpecialEncoding::kExponentOnly:
        return magnitude_mask();
      case SpecialEncoding::kUnsignedZero:
        return sign_mask();
      case SpecialEncoding::kNone:
        return max_finite_bits();
    }
    return 0;
  }
  constexpr bool is_nan_bits(uint64_t bits) const {
    const uint64_t mag = bits & magnitude_mask();
    switch (special) {
      case SpecialEncoding::kIeee:
        return mag > infinity_bits();
      case SpecialEncoding::kFiniteNan:
      case SpecialEncoding::kExponentOnly:
        return mag == magnitude_mask();
      case SpecialEncoding::kUnsignedZero:
        return bits == sign_mask();
      case SpecialEncoding::kNone:
        return false;
    }
    return false;
  }
  constexpr bool is_infinity_bits(uint64_t bits) const {
    return has_infinity() && (bits & magnitude_mask()) == infinity_bits();
  }

  // Unbiased exponents of the normal range. Exponent-only formats have no subnormals: their
  // field 0 is the normal value 2^-bias.
  constexpr int emin() const {
    return special == SpecialEncoding::kExponentOnly ? -bias : 1 - bias;
  }
  constexpr int emax() const { return static_cast<int>(max_finite_bits() >> mantissa_bits) - bias; }

  // Exact value of a magnitude encoding that is finite (no sign, no NaN/inf check).
  constexpr double magnitude_value(uint64_t mag) const {
    if (special == SpecialEncoding::kExponentOnly)
      return detail::pow2(static_cast<int>(mag) - bias);
    const auto e = static_cast<int>(mag >> mantissa_bits);
    const auto f = static_cast<double>(mag & mantissa_mask());
    if (e == 0) return keeps_subnormals() ? f * detail::pow2(emin() - mantissa_bits) : 0.0;
    return (detail::pow2(mantissa_bits) + f) * detail::pow2(e - bias - mantissa_bits);
  }
  constexpr double max_finite() const { return magnitude_value(max_finite_bits()); }
  constexpr double min_normal() const { return detail::pow2(emin()); }
  // Smallest positive value; the smallest normal when subnormals are flushed.
  constexpr double min_subnormal() const {
    return keeps_subnormals() && special != SpecialEncoding::kExponentOnly
               ? detail::pow2(emin() - mantissa_bits)
               : min_normal();
  }
  // Distance from 1 to the next larger value.
  constexpr double epsilon() const { return detail::pow2(-mantissa_bits); }

  // Empty when the declaration is usable, otherwise what is wrong with it.
  std::string validate() const;
  // Canonical name: a known name (bf16, e4m3fn, ...) or eXmY[fn|fnuz], then policy suffixes
  // that differ from the named format's defaults (e.g. "e4m3fn:saturate", "bf16:ftz").
  std::string name() const;
};

// IEEE-style eXmY: bias 2^(X-1)-1, infinity and NaN in the top binade.
constexpr Format ieee_format(int exponent_bits, int mantissa_bits) {
  return Format{exponent_bits,
                mantissa_bits,
                (1 << (exponent_bits - 1)) - 1,
                SpecialEncoding::kIeee,
                OverflowPolicy::kInfinity,
                SubnormalPolicy::kKeep};
}

namespace formats {
inline constexpr Format bf16 = ieee_format(8, 7);
inline constexpr Format fp16 = ieee_format(5, 10);
inline constexpr Format tf32 = ieee_format(8, 10);
inline constexpr Format fp32 = ieee_format(8, 23);
inline constexpr Format fp64 = ieee_format(11, 52);
inline constexpr Format e5m2 = ieee_format(5, 2);
// OCP FP8 e4m3fn: no infinity, overflow gives NaN unless saturation is asked for.
inline constexpr Format e4m3fn{
    4, 3, 7, SpecialEncoding::kFiniteNan, OverflowPolicy::kNan, SubnormalPolicy::kKeep};
inline constexpr Format e4m3fnuz{
    4, 3, 8, SpecialEncoding::kUnsignedZero, OverflowPolicy::kNan, SubnormalPolicy::kKeep};
inline constexpr Format e5m2fnuz{
    5, 2, 16, SpecialEncoding::kUnsignedZero, OverflowPolicy::kNan, SubnormalPolicy::kKeep};
// OCP Microscaling v1.0 element formats (§5.3.2, §5.3.3): no infinity, no NaN; a conversion
// that overflows clamps to the largest finite value, keeping the sign (§6.3).
inline constexpr Format fp6_e2m3{
    2, 3, 1, SpecialEncoding::kNone, OverflowPolicy::kSaturate, SubnormalPolicy::kKeep};
inline constexpr Format fp6_e3m2{
    3, 2, 3, SpecialEncoding::kNone, OverflowPolicy::kSaturate, SubnormalPolicy::kKeep};
inline constexpr Format fp4_e2m1{
    2, 1, 1, SpecialEncoding::kNone, OverflowPolicy::kSaturate, SubnormalPolicy::kKeep};
// OCP MX E8M0 (§5.4.1), the shared scale: 2^-127 .. 2^127 and NaN at 0xff; no sign, no zero.
inline constexpr Format e8m0{
    8, 0, 127, SpecialEncoding::kExponentOnly, OverflowPolicy::kNan, SubnormalPolicy::kKeep};
}  // namespace formats

// The spec values of docs/numerics.md §5, checked against what the declarations imply.
static_assert(formats::bf16.max_finite() == 0x1.fep127);
static_assert(formats::fp16.max_finite() == 65504.0);
static_assert(formats::e4m3fn.max_finite() == 448.0);
static_assert(formats::e5m2.max_finite() == 57344.0);
static_assert(formats::e4m3fnuz.max_finite() == 240.0);
static_assert(formats::e5m2fnuz.max_finite() == 57344.0);
static_assert(formats::tf32.max_finite() == 0x1.ffcp127);
static_assert(formats::fp32.max_finite() == 0x1.fffffep127);
static_assert(formats::fp16.min_normal() == 0x1p-14 && formats::fp16.min_subnormal() == 0x1p-24);
static_assert(formats::e4m3fn.min_subnormal() == 0x1p-9 &&
              formats::e5m2.min_subnormal() == 0x1p-16);
static_assert(formats::e4m3fnuz.min_subnormal() == 0x1p-10);
static_assert(formats::e5m2fnuz.min_subnormal() == 0x1p-17);
static_assert(formats::bf16.epsilon() == 0x1p-7 && formats::fp16.epsilon() == 0x1p-10);
static_assert(formats::e4m3fn.nan_bits() == 0x7f && formats::e4m3fnuz.nan_bits() == 0x80);
static_assert(formats::bf16.nan_bits() == 0x7fc0 && formats::fp16.infinity_bits() == 0x7c00);
// OCP MX v1.0 §5.3.2 (FP6), §5.3.3 (FP4), §5.4.1 (E8M0).
static_assert(formats::fp6_e2m3.max_finite() == 7.5 && formats::fp6_e2m3.min_normal() == 1.0 &&
              formats::fp6_e2m3.min_subnormal() == 0.125 && formats::fp6_e2m3.width() == 6);
static_assert(formats::fp6_e3m2.max_finite() == 28.0 && formats::fp6_e3m2.min_normal() == 0.25 &&
              formats::fp6_e3m2.min_subnormal() == 0.0625 && formats::fp6_e3m2.width() == 6);
static_assert(formats::fp4_e2m1.max_finite() == 6.0 && formats::fp4_e2m1.min_normal() == 1.0 &&
              formats::fp4_e2m1.min_subnormal() == 0.5 && formats::fp4_e2m1.width() == 4);
static_assert(formats::fp6_e2m3.emax() == 2 && formats::fp6_e3m2.emax() == 4 &&
              formats::fp4_e2m1.emax() == 2);
static_assert(formats::e8m0.max_finite() == 0x1p127 && formats::e8m0.min_normal() == 0x1p-127 &&
              formats::e8m0.min_subnormal() == 0x1p-127 && formats::e8m0.width() == 8);
static_assert(formats::e8m0.nan_bits() == 0xff && formats::e8m0.max_finite_bits() == 0xfe &&
              formats::e8m0.emin() == -127 && formats::e8m0.emax() == 127);

// Parses "bf16", "fp16", "tf32", "fp32", "fp64", "e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz",
// "fp6_e2m3", "fp6_e3m2", "fp4_e2m1", "e8m0", "eXmY", "eXmYfn", "eXmYfnuz", "eXmYfinite" (no
// infinity, no NaN) (aliases "bfloat16", "half", "float", "double", ml_dtypes'
// "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e8m0fnu", PTX's "ue8m0").
// Throws std::invalid_argument naming the text and what was expected.
Format parse_format(std::string_view text);

// Throws std::invalid_argument unless the format has a sign bit: `use` needs negative values
// (E8M0 holds scales only).
void require_sign(const Format& format, std::string_view use);

// "inf", "saturate" or "nan", as the command line spells the policies.
std::string_view overflow_name(OverflowPolicy policy);
// "ieee", "nan-only(all-ones)" or "nan-only(0x80..,no-0)", as `simprec formats` lists them.
// "kept", "flushed", or "none" for a format without subnormals (e8m0: exponent only).
std::string_view subnormals_name(const Format& format);
std::string_view special_encoding_name(SpecialEncoding special);

// The named formats, for listings.
struct NamedFormat {
  std::string_view name;
  Format format;
};
const NamedFormat* named_formats_begin();
const NamedFormat* named_formats_end();

}  // namespace simprec
