// Rounding modes, and the rounding specification that pairs a mode with its parameters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace simprec {

enum class RoundingMode : uint8_t {
  kNearestEven,        // rne
  kNearestAway,        // rna: ties away from zero
  kTowardZero,         // rtz
  kUp,                 // rup: toward +infinity
  kDown,               // rdn: toward -infinity
  kOdd,                // rto: truncate, then set the last bit if anything was dropped
  kStochastic,         // sr: up with probability proportional to the distance from the value below
  kNearestRandomTies,  // rnr: nearest, ties broken by a fair random bit
};

constexpr bool uses_random_bits(RoundingMode m) {
  return m == RoundingMode::kStochastic || m == RoundingMode::kNearestRandomTies;
}

// A mode with its parameters. sr_bits (1..32) is how many random bits stochastic rounding
// compares against: as in hardware SR units, only the top sr_bits of the dropped part count, so
// the probability of rounding up is floor(fraction * 2^sr_bits) / 2^sr_bits. Between the largest
// finite value and 2^(emax+1), rounding up overflows (to what the format's overflow policy
// gives); at or beyond 2^(emax+1) every draw overflows.
struct Rounding {
  RoundingMode mode = RoundingMode::kNearestEven;
  int sr_bits = 32;
  constexpr bool operator==(const Rounding&) const = default;
};

// Short names ("rne", "sr", ...) and long aliases ("nearest-even", "stochastic", ...).
// Throws std::invalid_argument naming the text and the accepted names.
RoundingMode parse_rounding_mode(std::string_view text);
std::string_view short_name(RoundingMode mode);
std::string_view long_name(RoundingMode mode);

inline constexpr RoundingMode kAllRoundingModes[] = {
    RoundingMode::kNearestEven, RoundingMode::kNearestAway,
    RoundingMode::kTowardZero,  RoundingMode::kUp,
    RoundingMode::kDown,        RoundingMode::kOdd,
    RoundingMode::kStochastic,  RoundingMode::kNearestRandomTies};
inline constexpr RoundingMode kDeterministicRoundingModes[] = {
    RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero,
    RoundingMode::kUp,          RoundingMode::kDown,        RoundingMode::kOdd};

}  // namespace simprec
