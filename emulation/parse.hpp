// Reading numbers from text without double rounding: the text's exact value goes straight to
// the rounding kernel.
#pragma once

#include <string_view>

#include "emulation/unrounded.hpp"

namespace simprec {

// Decimal ("0.1", "-2.5e-8"), hexadecimal floating point ("0x1.8p-3"), "inf", "-inf", "nan",
// surrounding blanks allowed. The result is exact for rounding into any format here (MPFR
// reads the text into 120 bits toward zero; anything further is jammed into a sticky bit).
// Throws std::invalid_argument when the text is not one number.
Unrounded parse_exact(std::string_view text);

}  // namespace simprec
