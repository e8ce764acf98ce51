// Numbers given as text by the user (options, file headers): the whole text must be the number,
// in range, or the caller gets an error that quotes it and says what was expected. Nothing is
// clamped, wrapped or cast.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "emulation/excerpt.hpp"

namespace simprec::limits {

// A decimal integer ("-" allowed for signed, no "+", no spaces, no other characters); nullopt
// when the text is anything else or out of the type's range.
std::optional<int64_t> parse_int64(std::string_view text);
std::optional<uint64_t> parse_uint64(std::string_view text);

// A decimal integer in [min, max]; otherwise throws std::invalid_argument:
// "WHAT 'TEXT' is not an integer in [MIN, MAX]".
int64_t parse_integer(std::string_view text, int64_t min, int64_t max, const std::string& what);

// A seed: a decimal integer in [0, 2^64). Throws std::invalid_argument naming `what`.
uint64_t parse_seed(std::string_view text, const std::string& what);

// A finite double (decimal or hex float as strtod reads it, the whole text); nullopt otherwise.
std::optional<double> parse_finite_double(std::string_view text);

// The shortest decimal text that reads back as v (std::to_chars).
std::string shortest_text(double v);

// At most `max_chars` characters of `text` for an error message (emulation/excerpt.hpp).
using simprec::excerpt;

}  // namespace simprec::limits
