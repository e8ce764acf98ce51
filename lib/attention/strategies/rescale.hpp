// Slot rescale: alpha, the factor that rescales a row's O accumulator and row sum l when a key
// block raises the row's max (flash attention's online softmax, online_softmax.hpp). One file per
// strategy in rescale/.
#pragma once

#include <cstdint>

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SiteArithmetic;

// What alpha is formed from: the row's max and its exponent shift (exp_impl) before and after the
// key block.
struct RescaleInput {
  double m_old, m_new;
  double shift_old, shift_new;
};

// The random indices of one row's alpha at one key block, in o_rescale's stream (the online
// softmax's layout): the exponential's, the argument's, and the argument's second rounding's.
struct RescaleDraws {
  uint64_t exp, argument, argument_product;
};

class Rescale : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"rescale",
                                  "alpha, the factor that rescales O and l when a row's max grows",
                                  "exact", SlotScope::kFlash};
  explicit Rescale(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  // Tag "every-block": alpha is formed after every key block but a row's first, also where the
  // max stayed (its argument is then a rounding error, not zero).
  bool every_block() const { return has_tag("every-block"); }

  virtual double alpha(const SiteArithmetic& a, const RescaleInput& in,
                       const RescaleDraws& draws) const = 0;
};

}  // namespace simprec::attention
