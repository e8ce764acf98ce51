// Correctly rounded arithmetic on encodings: each operation computes its exact result (or an
// exact-for-rounding jammed form) and rounds it once through the context.
#pragma once

#include <cstdint>

#include "emulation/round.hpp"
#include "emulation/unrounded.hpp"

namespace simprec {

// Exact operations on unrounded values (no rounding at all; significands up to 106 bits in).
Unrounded exact_add(const Unrounded& a, const Unrounded& b, RoundingMode mode_for_zero_sign);
Unrounded exact_mul(const Unrounded& a, const Unrounded& b);
Unrounded exact_fma(const Unrounded& a, const Unrounded& b, const Unrounded& c,
                    RoundingMode mode_for_zero_sign);
// Division and square root are infinite expansions in general: these keep >= 90 significant
// bits and jam the rest into bit 0, which rounds exactly (see Unrounded).
Unrounded jammed_div(const Unrounded& a, const Unrounded& b);
Unrounded jammed_sqrt(const Unrounded& a);

// Operands and result are encodings in ctx.format().
uint64_t add(RoundingContext& ctx, uint64_t a, uint64_t b);
uint64_t sub(RoundingContext& ctx, uint64_t a, uint64_t b);
uint64_t mul(RoundingContext& ctx, uint64_t a, uint64_t b);
uint64_t div(RoundingContext& ctx, uint64_t a, uint64_t b);
uint64_t fma(RoundingContext& ctx, uint64_t a, uint64_t b, uint64_t c);  // a*b + c
uint64_t sqrt(RoundingContext& ctx, uint64_t a);
uint64_t negate(const Format& format, uint64_t a);

// An encoding of `from` converted into ctx.format(), rounded once.
uint64_t convert(const Format& from, uint64_t bits, RoundingContext& to);

}  // namespace simprec
