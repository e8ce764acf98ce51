// exp, exp2 and log, correctly rounded in every mode.
//
// How: the double result of the C library (glibc documents these within 1 ulp of double) is
// widened to an interval of +-4 ulps of double; when both ends round to the same encoding with
// the same random word, that encoding is the correctly rounded result, since rounding is
// monotone. Otherwise (rare: the exact value is within 2^-50 relative of a rounding boundary,
// or the result is exact) MPFR computes it to 120 bits. So every result is correctly rounded
// (tested exhaustively for bf16 and fp16 against MPFR), as long as the C library's error stays
// under 4 ulps of double.
#pragma once

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

}  // namespace simprec
