// The arithmetic of one problem (a batch x head index) at the named sites (private to
// lib/attention): every operation rounded at its site with a random index of the problem's,
// recorded in the problem's trace when tracing; the exponent's row shift, the exponentials and
// the cast of P, as every pass of the site-by-site engine computes them.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "lib/attention/engine.hpp"
#include "lib/tracing/site_trace.hpp"

namespace simprec::attention {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The per-row state that turns a score into an exponent argument: built from the row max in the
// forward pass and from the log-sum-exp in the backward pass.
struct RowShift {
  double offset = 0;  // natural: round(m*scale) or round(lse); exp2: round(m*c) or round(lse*log2
                      // e); exact: scale*m or lse
  bool valid = false;
  ExpImpl impl = ExpImpl::kNatural;  // the pass's exp implementation
};

// The shift as a key block whose exponent argument is not fused takes it (config.hpp,
// FlexCompile): exp2-scaled-fma becomes exp2-scaled, the rest stay as they are.
inline RowShift unfused(RowShift shift) {
  if (shift.impl == ExpImpl::kExp2ScaledFma) shift.impl = ExpImpl::kExp2Scaled;
  return shift;
}

class SiteArithmetic {
 public:
  // traces: the problem's per-site traces, or nullptr when not tracing; exp2_misses collects
  // the fp32 arguments whose exp2 the engine's device table lacks.
  SiteArithmetic(const Engine& e, int64_t p, std::array<tracing::SiteTrace, kSiteCount>* traces,
                 std::vector<uint32_t>* exp2_misses)
      : e_(e), p_(p), traces_(traces), exp2_misses_(exp2_misses) {}

  const Engine& engine() const { return e_; }
  // The problem's random index for (row, column, step).
  uint64_t idx(int64_t i, int64_t j, int64_t step = 0) const { return e_.idx(p_, i, j, step); }

  tracing::SiteTrace* trace(Site s) const {
    return traces_ ? &(*traces_)[static_cast<int>(s)] : nullptr;
  }
  // Rounds at an elementwise site, recording the error when tracing.
  double at(Site s, double x, uint64_t index) const {
    const double y = e_.rd(s, x, index);
    if (traces_)
      (*traces_)[static_cast<int>(s)].record(e_.r[static_cast<int>(s)].format(), x, 0, y);
    return y;
  }
  double at_exact(Site s, double hi, double lo, uint64_t index) const {
    const double y = e_.rd_exact(s, hi, lo, index);
    if (traces_)
      (*traces_)[static_cast<int>(s)].record(e_.r[static_cast<int>(s)].format(), hi, lo, y);
    return y;
  }
  // round(a*b) and round(a + b) from the exact result.
  double mul_at(Site s, double a, double b, uint64_t index) const {
    double hi, lo;
    two_prod(a, b, hi, lo);
    return at_exact(s, hi, lo, index);
  }
  double add_at(Site s, double a, double b, uint64_t index) const {
    double hi, lo;
    two_sum(a, b, hi, lo);
    return at_exact(s, hi, lo, index);
  }
  // round(a*b + c) from a*b + c to about 106 bits (one rounding, as a fused multiply-add).
  double fma_at(Site s, double a, double b, double c, uint64_t index) const {
    double ph, pl, h, l1, hi, lo;
    two_prod(a, b, ph, pl);
    two_sum(ph, c, h, l1);
    two_sum(h, l1 + pl, hi, lo);
    return at_exact(s, hi, lo, index);
  }
  // round(a / b) from the exact quotient q + r/b, r = a - q*b exactly.
  double div_at(Site s, double a, double b, uint64_t index) const {
    const double q = a / b;
    const double rem = std::fma(-q, b, a);
    return at_exact(s, q, rem / b, index);
  }

  // Row shift from a max m (forward) or a log-sum-exp (backward).
  RowShift shift_from_max(double m, int64_t i) const;
  RowShift shift_from_lse(double lse, int64_t i) const;
  // The base-2 LSE that lse_impl=log2 reports as `lse` (round(lse2 * ln2') at lse): of the
  // fp32 neighbours of round(lse / ln2'), the one nearest lse / ln2' that reports lse (ln2' < 1,
  // so most reported values have one such value and some two); round(lse / ln2') when the lse
  // site is not fp32 round-to-nearest-even or none reports lse.
  double base2_lse(double lse, int64_t i) const;
  // u(s) = round(round(s*scale')*log2e'), both products rounded at exp_arg (exp2-scaled's score in
  // base 2).
  double scaled_log2(double s, uint64_t index) const;

  // exp2(arg) at `site`: the device's value when the engine has a table, the site is fp32
  // round-to-nearest-even and arg is an fp32 value; otherwise (or when the table lacks arg,
  // which is recorded) exp2 rounded at the site.
  // device_math=sm90 and an fp32 round-to-nearest-even site: the device's functions apply.
  bool sm90_at(Site site) const;
  double exp2_at(Site site, double arg, uint64_t index) const;
  // expf(arg) and logf(l) at `site` as a kernel built without --use_fast_math calls them:
  // libdevice's __nv_expf and __nv_logf (emulation/device_math/libdevice_expf_logf.hpp) where
  // config.device_math says so and the argument is an fp32 value, else rounded at the site.
  double expf_at(Site site, double arg, uint64_t index) const;
  double logf_at(Site site, double l, uint64_t index) const;
  // log(l) at `site`: the device's __logf where config.device_math says so, else rounded.
  double log_at(Site site, double l, uint64_t index) const;
  // log2(l) at `site`: libdevice's log2f (Triton's tl.log2) where config.device_math says so,
  // the site is fp32 round-to-nearest-even and l an fp32 value; else log2 rounded at the site.
  double log2_at(Site site, double l, uint64_t index) const;
  // x / y as the H100's div.full.f32 (x * rcp.approx(y) rounded to nearest even) where x and y
  // are fp32 values within its modelled range; else x / y rounded at `site`.
  double div_full_at(Site site, double x, double y, uint64_t index) const;
  // 1/l at `site` for the final normalisation: the H100's rcp.approx where norm=div-full (and l
  // is an fp32 value), else rounded.
  double reciprocal_at(Site site, double l, uint64_t index) const;

  // exp(arg) or exp2(arg) correctly rounded at `site` (its format, mode and random bits), not a
  // libm double rounded again: C libraries' exp2 is not correctly rounded on every argument.
  double exp_rounded(Site site, double arg, uint64_t index, bool base2) const;

  // P cast at p_cast; with tiled random bits the draw is the kernel's for (row i, column j).
  double cast_p(double p, int64_t i, int64_t j) const;

  // Unnormalised probability of score s against the row shift, rounded at exp_arg and exp.
  double prob(double s, const RowShift& shift, uint64_t index) const;

  // The max the exponent subtracts for one block row: the row max, or paper A's shifted max.
  double block_max(const double* srow, int64_t n) const;

 protected:
  const Engine& e_;
  int64_t p_;
  std::array<tracing::SiteTrace, kSiteCount>* traces_;
  std::vector<uint32_t>* exp2_misses_;
};

}  // namespace simprec::attention
