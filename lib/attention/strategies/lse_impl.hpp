// Slot lse_impl: how the log-sum-exp a pass reports is formed from the row's max m, its exponent
// shift and its row sum l (rounded at lse). One file per strategy in lse_impl/.
#pragma once

#include <cstdint>

#include "lib/attention/strategies/exp_impl.hpp"
#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SiteArithmetic;

struct LseInput {
  double m;        // the row max (of the scores; -inf where every key is masked)
  RowShift shift;  // its exponent shift (exp_impl)
  double l;        // the row sum
  int64_t row;     // the query row
};

class Lse : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"lse_impl",
                                  "how the log-sum-exp is formed from the row max m, its shift "
                                  "and the row sum l",
                                  "exact", SlotScope::kAll};
  explicit Lse(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  // The natural-log LSE the pass reports.
  virtual double lse(const SiteArithmetic& a, const LseInput& in) const = 0;

  // Tag "base2": the kernel keeps a base-2 LSE, from which its backward pass recomputes P.
  bool base2() const { return has_tag("base2"); }
  // That base-2 LSE (base2 strategies only).
  virtual double lse2(const SiteArithmetic& a, const LseInput& in) const { return 0.0; }
  // The base-2 LSE behind a reported natural LSE (base2 strategies only).
  virtual double lse2_of_reported(const SiteArithmetic& a, double lse, int64_t row) const {
    return 0.0;
  }
};

// The forms several strategies share (lse_forms.cpp), each rounding at lse with row `in`'s
// indices (row, 0, 0) and on: round(m scale + log l), log l in double or the device's __logf
// where device_math supplies one (the exact strategy);
double exact_lse(const SiteArithmetic& a, const LseInput& in);
// round(fma(m, c, round(log2 l))), the base-2 LSE of a Triton kernel's (m c + log2 l).
double fma_log2_lse2(const SiteArithmetic& a, const LseInput& in);

}  // namespace simprec::attention
