// The arithmetic of one problem (a batch x head index) at the named sites (private to
// lib/attention): every operation rounded at its site with a random index of the problem's,
// recorded in the problem's trace when tracing; the exponent's row shift, the exponentials and
// the cast of P, as every pass of the site-by-site engine computes them.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "lib/attention/device_function.hpp"
#include "lib/attention/engine.hpp"
#include "lib/attention/row_probe.hpp"
#include "lib/attention/strategies/exp_impl.hpp"
#include "lib/tracing/site_trace.hpp"

namespace simprec::attention {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The shift as a key block whose exponent argument is not fused takes it (flex_compile).
inline RowShift unfused(RowShift shift) {
  if (shift.impl) shift.impl = &shift.impl->unfused();
  return shift;
}

class SiteArithmetic {
 public:
  // traces: the problem's per-site traces, or nullptr when not tracing; misses collects the
  // arguments the tables of supplied device functions lack (AttentionConfig::device_tables);
  // probe: the row of this problem to record (row_probe.hpp), or nullptr.
  SiteArithmetic(const Engine& e, int64_t p, std::array<tracing::SiteTrace, kSiteCount>* traces,
                 DeviceMisses* misses, RowProbe* probe = nullptr)
      : e_(e), p_(p), traces_(traces), misses_(misses), probe_(probe) {}

  const Engine& engine() const { return e_; }
  int64_t problem() const { return p_; }
  // The problem's random index for (row, column, step).
  uint64_t idx(int64_t i, int64_t j, int64_t step = 0) const { return e_.idx(p_, i, j, step); }

  // The probe while it records query row `row`, else nullptr.
  RowProbe* probe_for(int64_t row) const {
    return probe_ && probe_->active && probe_->row == row ? probe_ : nullptr;
  }

  tracing::SiteTrace* trace(Site s) const {
    return traces_ ? &(*traces_)[static_cast<int>(s)] : nullptr;
  }
  // Rounds at an elementwise site, recording the error when tracing.
  double at(Site s, double x, uint64_t index) const {
    const double y = e_.rd(s, x, index);
    if (traces_)
      (*traces_)[static_cast<int>(s)].record(e_.r[static_cast<int>(s)].format(), x, 0, y);
    if (probe_) [[unlikely]]
      probe_->rounded(s, x, y);
    return y;
  }
  double at_exact(Site s, double hi, double lo, uint64_t index) const {
    const double y = e_.rd_exact(s, hi, lo, index);
    if (traces_)
      (*traces_)[static_cast<int>(s)].record(e_.r[static_cast<int>(s)].format(), hi, lo, y);
    if (probe_) [[unlikely]]
      probe_->rounded(s, hi, y);
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

  // Row shift from a max m (forward, exp_impl) or a log-sum-exp (backward, bwd_exp_impl).
  RowShift shift_from_max(double m, int64_t i) const;
  RowShift shift_from_lse(double lse, int64_t i) const;
  // round(lse * log2e') at exp_arg, log2e' lse_log2e's constant: the backward shift of a base-2
  // exp_impl.
  double base2_shift_from_lse(double lse, uint64_t index) const;
  // u(s) = round(round(s*scale')*log2e'), both products rounded at exp_arg (exp2-scaled's score in
  // base 2).
  double scaled_log2(double s, uint64_t index) const;

  // The device functions apply to fp32 arguments at sites that round to fp32 nearest-even: a
  // function the caller supplied (its table's value; an argument the table lacks is recorded),
  // else device_math's. Their fp64 forms apply to doubles at fp64 nearest-even sites. Elsewhere,
  // and where no function has a value, each function below is correctly rounded at the site.
  bool device_at(Site site) const;
  // exp2(arg) at `site` (exp2f; the supplied exp2 where the exponent is in base 2).
  double exp2_at(Site site, double arg, uint64_t index) const;
  // expf(arg), logf(l), __logf(l) and log2f(l) at `site` (the supplied log serves logf and
  // __logf).
  double expf_at(Site site, double arg, uint64_t index) const;
  double logf_at(Site site, double l, uint64_t index) const;
  double log_at(Site site, double l, uint64_t index) const;
  double log2_at(Site site, double l, uint64_t index) const;
  // tanhf(x) at `site` (device_math's tanh, else correctly rounded).
  double tanh_at(Site site, double x, uint64_t index) const;
  // The kernel's 1.0f / x and x / y at `site`.
  double rcpf_at(Site site, double x, uint64_t index) const;
  double divf_at(Site site, double x, double y, uint64_t index) const;
  // The device's reciprocal of an fp32 y wherever a function supplies one (the site aside).
  std::optional<float> device_rcp(float y) const;
  // x / y as the H100's div.full.f32, x * rcp(y) rounded to nearest even in fp32, where x and y
  // are fp32 values: rcp the device's reciprocal where one is supplied, else rcp.approx.ftz
  // within its modelled range; else x / y rounded at `site`.
  double div_full_at(Site site, double x, double y, uint64_t index) const;
  // o times V's scale for column c at o_norm where V was quantised (input_quantization.hpp); o
  // unchanged otherwise.
  double v_descaled(double o, int64_t c, uint64_t index) const;

  // exp(arg) or exp2(arg) correctly rounded at `site` (its format, mode and random bits), not a
  // libm double rounded again: C libraries' exp2 is not correctly rounded on every argument.
  double exp_rounded(Site site, double arg, uint64_t index, bool base2) const;

  // P cast at p_cast; with tiled random bits the draw is the kernel's for (row i, column j).
  double cast_p(double p, int64_t i, int64_t j) const;

  // Unnormalised probability of score s against the row shift (its exp_impl's), 0 for a masked
  // score or an invalid shift.
  double prob(double s, const RowShift& shift, uint64_t index) const {
    if (!shift.valid || s == -kInf) return 0.0;
    return shift.impl->prob(*this, s, shift.offset, index);
  }

  // The max the exponent subtracts for one block row: the row max, or paper A's shifted max.
  double block_max(const double* srow, int64_t n) const;

 protected:
  const Engine& e_;
  int64_t p_;
  std::array<tracing::SiteTrace, kSiteCount>* traces_;
  DeviceMisses* misses_;
  RowProbe* probe_;

 private:
  // The supplied function's value at `key`, or nullopt where it was not supplied or its table
  // lacks the key (recorded in misses_).
  std::optional<float> supplied(DeviceFn fn, uint64_t key) const;
  bool device_f64_at(Site site) const;
  // A device function's value y of `exact` at `site`, recorded by the probe as that site's
  // rounding (traced: in the site's trace too).
  double probed(Site site, double exact, double y) const {
    if (probe_) [[unlikely]]
      probe_->rounded(site, exact, y);
    return y;
  }
  double traced(Site site, const Format& format, double exact, double y) const {
    if (traces_) (*traces_)[static_cast<int>(site)].record(format, exact, 0, y);
    return probed(site, exact, y);
  }
};

}  // namespace simprec::attention
