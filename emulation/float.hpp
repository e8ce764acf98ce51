// Float<F>: a value of format F stored as its encoding. It has no arithmetic operators on
// purpose: every operation names the rounding context it rounds in, so the precision of each
// step is visible where it happens (unlike a type whose `+` silently rounds).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "emulation/arithmetic.hpp"
#include "emulation/elementary.hpp"
#include "emulation/round.hpp"

namespace simprec {

template <int Width>
using StorageFor =
    std::conditional_t<(Width <= 8), uint8_t,
                       std::conditional_t<(Width <= 16), uint16_t,
                                          std::conditional_t<(Width <= 32), uint32_t, uint64_t>>>;

template <Format F>
class Float {
 public:
  using Storage = StorageFor<F.width()>;
  static constexpr Format format = F;

  constexpr Float() = default;
  static constexpr Float from_bits(Storage bits) { return Float(bits); }
  // x rounded once into F.
  static Float round(double x, RoundingContext& ctx) { return Float(checked(ctx).round(x)); }

  constexpr Storage bits() const { return bits_; }
  double to_double() const { return decode(F, bits_); }  // exact
  float to_float(RoundingContext& fp32_ctx) const {
    return static_cast<float>(decode(formats::fp32, convert(F, bits_, fp32_ctx)));
  }
  bool is_nan() const { return F.is_nan_bits(bits_); }
  constexpr bool operator==(const Float&) const = default;  // encodings, not values

  friend Float add(Float a, Float b, RoundingContext& ctx) {
    return Float(simprec::add(checked(ctx), a.bits_, b.bits_));
  }
  friend Float sub(Float a, Float b, RoundingContext& ctx) {
    return Float(simprec::sub(checked(ctx), a.bits_, b.bits_));
  }
  friend Float mul(Float a, Float b, RoundingContext& ctx) {
    return Float(simprec::mul(checked(ctx), a.bits_, b.bits_));
  }
  friend Float div(Float a, Float b, RoundingContext& ctx) {
    return Float(simprec::div(checked(ctx), a.bits_, b.bits_));
  }
  friend Float fma(Float a, Float b, Float c, RoundingContext& ctx) {
    return Float(simprec::fma(checked(ctx), a.bits_, b.bits_, c.bits_));
  }
  friend Float sqrt(Float a, RoundingContext& ctx) {
    return Float(simprec::sqrt(checked(ctx), a.bits_));
  }
  friend Float exp(Float a, RoundingContext& ctx) {
    return Float(simprec::exp(checked(ctx), a.bits_));
  }
  friend Float exp2(Float a, RoundingContext& ctx) {
    return Float(simprec::exp2(checked(ctx), a.bits_));
  }
  friend Float log(Float a, RoundingContext& ctx) {
    return Float(simprec::log(checked(ctx), a.bits_));
  }
  friend Float operator-(Float a) { return Float(static_cast<Storage>(negate(F, a.bits_))); }

  // This value in another format G, rounded once in ctx (whose format must be G).
  template <Format G>
  Float<G> to(RoundingContext& ctx) const {
    return Float<G>::from_bits(
        static_cast<typename Float<G>::Storage>(convert(F, bits_, Float<G>::checked(ctx))));
  }

  static RoundingContext& checked(RoundingContext& ctx) {
    if (!(ctx.format() == F)) {
      throw std::invalid_argument("rounding context is for " + ctx.format().name() + ", value is " +
                                  F.name());
    }
    return ctx;
  }

 private:
  constexpr explicit Float(uint64_t bits) : bits_(static_cast<Storage>(bits)) {}
  Storage bits_ = 0;
};

using BFloat16 = Float<formats::bf16>;
using Half = Float<formats::fp16>;
using Float8E4M3FN = Float<formats::e4m3fn>;
using Float8E5M2 = Float<formats::e5m2>;

}  // namespace simprec
