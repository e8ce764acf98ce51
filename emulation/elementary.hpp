// exp, exp2 and log (and log2 and tanh of a double), correctly rounded in every mode.
//
// How: the double result of the C library (glibc documents these within 1 ulp of double) is
// widened to an interval of +-4 ulps of double; when both ends round to the same encoding with
// the same random word, that encoding is the correctly rounded result, since rounding is
// monotone. Otherwise (rare: the exact value is within 2^-50 relative of a rounding boundary,
// or the result is exact) MPFR computes it to 120 bits. So every result is correctly rounded
// (tested exhaustively for bf16 and fp16 against MPFR), as long as the C library's error stays
// under 4 ulps of double.
#pragma once

#include <cstddef>
#include <cstdint>

#include "emulation/round.hpp"

namespace simprec {

uint64_t exp(RoundingContext& ctx, uint64_t a);
uint64_t exp2(RoundingContext& ctx, uint64_t a);
uint64_t log(RoundingContext& ctx, uint64_t a);

// The same on a double input (any double), rounded once into ctx.format().
uint64_t exp_of(RoundingContext& ctx, double x);
uint64_t exp2_of(RoundingContext& ctx, double x);
uint64_t log_of(RoundingContext& ctx, double x);
uint64_t log2_of(RoundingContext& ctx, double x);
uint64_t tanh_of(RoundingContext& ctx, double x);

// exp of a float correctly rounded to fp32 with round-to-nearest-even (what exp_of gives in that
// format and mode), fast: the C library's double exp rounded to float, unless that double lies
// within 4 ulps of a float rounding boundary, where exp_of decides.
float exp_fp32(float x);
// y[i] = exp_fp32(x[i]) for i < n; x == y is allowed. With AVX-512, 16 at a time: a double exp
// (relative error below 2^-48) rounded to float, the rare argument whose double result lies
// within 2^10 ulps of a rounding boundary (about 1 in 2^18) recomputed by exp_fp32.
void exp_fp32(const float* x, float* y, size_t n);
// exp2 of a float correctly rounded to fp32 nearest-even (what exp2_of gives), the same way: the
// C library's double exp2 rounded to float unless undecided; the batch form, with AVX-512, a
// double 2^x (relative error below 2^-48) rounded to float, undecided results recomputed.
float exp2_fp32(float x);
void exp2_fp32(const float* x, float* y, size_t n);

}  // namespace simprec
