#include "emulation/parse.hpp"

#include <mpfr.h>

#include <stdexcept>
#include <string>

#include "emulation/mpfr_bridge.hpp"

namespace simprec {

Unrounded parse_exact(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  const auto last = text.find_last_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    throw std::invalid_argument("empty input, expected a number");
  const std::string trimmed(text.substr(first, last - first + 1));
  mpfr_t x;
  mpfr_init2(x, 120);
  mpfr_clear_flags();
  char* end = nullptr;
  const int ternary = mpfr_strtofr(x, trimmed.c_str(), &end, 0, MPFR_RNDZ);
  const bool complete = end == trimmed.c_str() + trimmed.size() && end != trimmed.c_str();
  // MPFR also reads "@inf@" and bases other than 10 and 16 with prefixes; accept only what we
  // document by rejecting '@' and a binary prefix (after the sign; "0x0b" is hexadecimal).
  const size_t digits = trimmed.find_first_not_of("+-");
  const std::string_view body =
      digits == std::string::npos ? std::string_view() : std::string_view(trimmed).substr(digits);
  const bool binary_prefix = body.starts_with("0b") || body.starts_with("0B");
  const bool documented = trimmed.find('@') == std::string::npos && !binary_prefix;
  if (!complete || !documented) {
    mpfr_clear(x);
    throw std::invalid_argument("'" + trimmed +
                                "' is not a number (expected decimal, hex float like 0x1.8p-3, "
                                "inf, -inf or nan)");
  }
  const Unrounded result = unrounded_from_mpfr(x, ternary);
  mpfr_clear(x);
  return result;
}

}  // namespace simprec
