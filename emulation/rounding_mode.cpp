#include "emulation/rounding_mode.hpp"
#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"

#include <stdexcept>

namespace simprec {
namespace {

struct ModeNames {
  RoundingMode mode;
  std::string_view short_name;
  std::string_view long_name;
};
constexpr ModeNames kModeNames[] = {
    {RoundingMode::kNearestEven, "rne", "nearest-even"},
    {RoundingMode::kNearestAway, "rna", "nearest-away"},
    {RoundingMode::kTowardZero, "rtz", "toward-zero"},
    {RoundingMode::kUp, "rup", "up"},
    {RoundingMode::kDown, "rdn", "down"},
    {RoundingMode::kOdd, "rto", "odd"},
    {RoundingMode::kStochastic, "sr", "stochastic"},
    {RoundingMode::kNearestRandomTies, "rnr", "nearest-random-ties"},
};

}  // namespace

RoundingMode parse_rounding_mode(std::string_view text) {
  for (const auto& n : kModeNames) {
    if (n.short_name == text || n.long_name == text) return n.mode;
  }
  std::vector<std::string> names;
  for (const auto& n : kModeNames) names.emplace_back(n.short_name);
  for (const auto& n : kModeNames) names.emplace_back(n.long_name);
  throw std::invalid_argument("unknown rounding mode '" + excerpt(text) + "'" +
                              did_you_mean(text, names) +
                              ": expected one of rne rna rtz rup rdn rto sr rnr (or "
                              "nearest-even nearest-away toward-zero up down odd stochastic "
                              "nearest-random-ties)");
}

std::string_view short_name(RoundingMode mode) {
  for (const auto& n : kModeNames) {
    if (n.mode == mode) return n.short_name;
  }
  return "?";
}

std::string_view long_name(RoundingMode mode) {
  for (const auto& n : kModeNames) {
    if (n.mode == mode) return n.long_name;
  }
  return "?";
}

}  // namespace simprec
