// A floating-point format: its bit layout, how it encodes NaN and infinity, and its policies
// for overflow and subnormals. Everything else (limits, special encodings) is derived here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace simprec {

// How the top encodings are spent on NaN and infinity (CUTLASS names the same three cases).
enum class SpecialEncoding : uint8_t {
  kIeee,         // exponent all ones: infinity (mantissa zero) or NaN (mantissa nonzero)
  kFiniteNan,    // OCP e4m3fn: only S.1111.111 is NaN; no infinity; the top binade is finite
  kUnsignedZero  // fnuz: 0x80, the negative-zero slot, is the only NaN; no infinity, no -0
};

// What a result beyond the largest finite value becomes, where IEEE 754 would give infinity.
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

  constexpr int width() const { return 1 + exponent_bits + mantissa_bits; }
  constexpr int precision() const { return mantissa_bits + 1; }
  constexpr uint64_t sign_mask() const { return uint64_t{1} << (width() - 1); }
  constexpr uint64_t magnitude_mask() const { return sign_mask() - 1; }
  constexpr uint64_t mantissa_mask() const { return (uint64_t{1} << mantissa_bits) - 1; }
  constexpr uint64_t exponent_field_max() const { return (uint64_t{1} << exponent_bits) - 1; }

  constexpr bool has_infinity() const { return special == SpecialEncoding::kIeee; }
  constexpr bool has_negative_zero() const { return special != SpecialEncoding::kUnsignedZero; }
  constexpr bool keeps_subnormals() const { return subnormals == SubnormalPolicy::kKeep; }

  // Magnitude encoding of the largest finite value.
  constexpr uint64_t max_finite_bits() const {
    switch (special) {
      case SpecialEncoding::kIeee:
        return (exponent_field_max() << mantissa_bits) - 1;
      case SpecialEncoding::kFiniteNan:
        return magnitude_mask() - 1;
      case SpecialEncoding::kUnsignedZero:
        return magnitude_mask();
    }
    return 0;
  }
  // Encoding of +infinity; meaningful only when has_infinity().
  constexpr uint64_t infinity_bits() const { return exponent_field_max() << mantissa_bits; }
  // The canonical NaN this library produces.
  constexpr uint64_t nan_bits() const {
    switch (special) {
      case SpecialEncoding::kIeee:
        return infinity_bits() | (uint64_t{1} << (mantissa_bits - 1));
      case SpecialEncoding::kFiniteNan:
        return magnitude_mask();
      case SpecialEncoding::kUnsignedZero:
        return sign_mask();
    }
    return 0;
  }
  constexpr bool is_nan_bits(uint64_t bits) const {
    const uint64_t mag = bits & magnitude_mask();
    switch (special) {
      case SpecialEncoding::kIeee:
        return mag > infinity_bits();
      case SpecialEncoding::kFiniteNan:
        return mag == magnitude_mask();
      case SpecialEncoding::kUnsignedZero:
        return bits == sign_mask();
    }
    return false;
  }
  constexpr bool is_infinity_bits(uint64_t bits) const {
    return has_infinity() && (bits & magnitude_mask()) == infinity_bits();
  }

  // Unbiased exponents of the normal range.
  constexpr int emin() const { return 1 - bias; }
  constexpr int emax() const { return static_cast<int>(max_finite_bits() >> mantissa_bits) - bias; }

  // Exact value of a magnitude encoding that is finite (no sign, no NaN/inf check).
  constexpr double magnitude_value(uint64_t mag) const {
    const auto e = static_cast<int>(mag >> mantissa_bits);
    const auto f = static_cast<double>(mag & mantissa_mask());
    if (e == 0) return keeps_subnormals() ? f * detail::pow2(emin() - mantissa_bits) : 0.0;
    return (detail::pow2(mantissa_bits) + f) * detail::pow2(e - bias - mantissa_bits);
  }
  constexpr double max_finite() const { return magnitude_value(max_finite_bits()); }
  constexpr double min_normal() const { return detail::pow2(emin()); }
  // Smallest positive value; the smallest normal when subnormals are flushed.
  constexpr double min_subnormal() const {
    return keeps_subnormals() ? detail::pow2(emin() - mantissa_bits) : min_normal();
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

// Parses "bf16", "fp16", "tf32", "fp32", "fp64", "e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz",
// "eXmY", "eXmYfn", "eXmYfnuz" (aliases "bfloat16", "half", "float", "double").
// Throws std::invalid_argument naming the text and what was expected.
Format parse_format(std::string_view text);

// "inf", "saturate" or "nan", as the command line spells the policies.
std::string_view overflow_name(OverflowPolicy policy);
// "ieee", "nan-only(all-ones)" or "nan-only(0x80..,no-0)", as `simprec formats` lists them.
std::string_view special_encoding_name(SpecialEncoding special);

// The named formats, for listings.
struct NamedFormat {
  std::string_view name;
  Format format;
};
const NamedFormat* named_formats_begin();
const NamedFormat* named_formats_end();

}  // namespace simprec
