// FlexAttention's LSE (torch/_inductor/kernel/flex): the kernel keeps lse2 = m_i + log2(l_i) in
// base 2, from which its backward pass recomputes P, and torch reports lse2 * ln 2 in fp32.
#include <cmath>
#include <numbers>

#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Log2 final : public Lse {
 public:
  Log2()
      : Lse({.name = "log2",
             .doc = "lse2 = round(shift + round(log2 l)) kept in base 2 for the backward pass "
                    "(shift the base-2 max: exp2-scaled's u(m), exp2's round(m c)), reported as "
                    "round(lse2 ln2'): FlexAttention, a Triton kernel's (m + tl.log2(l)) * ln 2",
             .needs = {{.key = "exp_impl", .tag = "exp2"}},
             .tags = {"base2"},
             .draws = {{"lse",
                        "the report: (row, 0, 0); the log: + 1; lse2: + 2; ln 2: + 3; from a "
                        "given LSE: (row, 0, 2)"}}}) {}

  double lse(const SiteArithmetic& a, const LseInput& in) const override {
    if (!in.shift.valid) return -kInf;
    const uint64_t index = a.idx(in.row, 0, 0);
    const double ln2 = a.at(Site::kLse, std::numbers::ln2, index + 3);
    return a.mul_at(Site::kLse, lse2(a, in), ln2, index);
  }

  double lse2(const SiteArithmetic& a, const LseInput& in) const override {
    if (!in.shift.valid) return -kInf;
    const uint64_t index = a.idx(in.row, 0, 0);
    // A row whose keys are all masked has l = 0, which the kernel replaces by 1.
    const double log2_l = a.log2_at(Site::kLse, in.l == 0 ? 1.0 : in.l, index + 1);
    return a.add_at(Site::kLse, in.shift.offset, log2_l, index + 2);
  }

  // Of the fp32 neighbours of round(lse / ln2'), the one nearest lse / ln2' that reports lse
  // (ln2' < 1, so most reported values have one such value and some two); round(lse / ln2') when
  // the lse site is not fp32 round-to-nearest-even or none reports lse.
  double lse2_of_reported(const SiteArithmetic& a, double lse, int64_t row) const override {
    if (!std::isfinite(lse)) return lse;
    const Engine& e = a.engine();
    const uint64_t index = a.idx(row, 0, 2);
    const double ln2 = e.rd(Site::kLse, std::numbers::ln2, index);
    const double quotient = lse / ln2;
    const double rounded = e.rd(Site::kLse, quotient, index);
    if (!e.r[static_cast<int>(Site::kLse)].is_float_rne()) return rounded;
    const float centre = static_cast<float>(rounded);
    double best = rounded;
    bool found = false;
    for (const float x :
         {std::nextafter(centre, -INFINITY), centre, std::nextafter(centre, INFINITY)}) {
      const double reported = static_cast<double>(static_cast<float>(static_cast<double>(x) * ln2));
      if (reported != lse) continue;
      if (!found || std::abs(x - quotient) < std::abs(best - quotient)) best = x;
      found = true;
    }
    return best;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Log2)

}  // namespace simprec::attention
