// Converting MPFR results into the rounding kernel's input.
#pragma once

#include <mpfr.h>

#include "emulation/unrounded.hpp"

namespace simprec {

// `x` was rounded toward zero to at most 120 bits with ternary value `ternary`; the result is
// x with the inexactness jammed into a sticky bit. MPFR overflow and underflow (flags read
// here) become values far outside every format's range, of the right sign.
Unrounded unrounded_from_mpfr(const mpfr_t x, int ternary);

}  // namespace simprec
