// Slot exp_impl: how P = exp(scale (S - m)) is formed from a score S and its row's shift (the row
// max m in the forward pass, the log-sum-exp in the backward pass): the exponent argument, its
// roundings at exp_arg, and the base of the exponential (rounded at exp, through the device's
// function where device_math says so). One file per strategy in exp_impl/.
#pragma once

#include <cstdint>

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SiteArithmetic;
class ExpArg;

// The per-row state that turns a score into an exponent argument: built from the row max in the
// forward pass and from the log-sum-exp in the backward pass.
struct RowShift {
  double offset = 0;  // natural: round(m*scale) or round(lse); exp2: round(m*c) or
                      // round(lse*log2 e); exact: scale*m or lse
  bool valid = false;
  const ExpArg* impl = nullptr;  // the pass's exp implementation
};

class ExpArg : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"exp_impl",
                                  "how P = exp(scale (S - m)) is formed: the exponent argument "
                                  "with its roundings, and the exponential's base",
                                  "natural", SlotScope::kAll};
  explicit ExpArg(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  // Tags: "exp2" (P = exp2 of an argument in base 2), "folded-scale" (the softmax scale folded
  // into one constant c = scale log2 e, into which a quantisation's descale folds too), "scaled"
  // (the shift is u(m), the score's own base-2 form: exp2-scaled), "natural" (P = exp of a
  // rounded natural argument), "exact".
  bool base2() const { return has_tag("exp2"); }

  // The row's shift from its max m (forward pass); `index` is the row's random index for it.
  virtual double shift_from_max(const SiteArithmetic& a, double m, uint64_t index) const = 0;
  // The row's shift from its log-sum-exp (backward pass).
  virtual double shift_from_lse(const SiteArithmetic& a, double lse, uint64_t index) const = 0;
  // P of a finite or infinite score s against a valid shift (a score of -inf is 0 before this).
  virtual double prob(const SiteArithmetic& a, double s, double shift, uint64_t index) const = 0;
  // The strategy of a key block whose argument the compiler did not fuse (flex_compile).
  virtual const ExpArg& unfused() const { return *this; }
};

}  // namespace simprec::attention
