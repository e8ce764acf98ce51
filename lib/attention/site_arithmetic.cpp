#include "lib/attention/site_arithmetic.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <optional>

#include "emulation/device_math/libdevice_expf_logf.hpp"
#include "emulation/device_math/libdevice_log2f.hpp"
#include "emulation/device_math/sm90_mufu.hpp"
#include "emulation/elementary.hpp"
#include "emulation/tiled_random.hpp"
#include "lib/attention/beta_rowmax.hpp"

namespace simprec::attention {

RowShift SiteArithmetic::shift_from_max(double m, int64_t i) const {
  if (m == -kInf) return {};
  const uint64_t index = e_.idx(p_, i, 0, 1);
  const ExpImpl impl = e_.cfg.exp_impl;
  switch (impl) {
    case ExpImpl::kExact:
      return {e_.scale * m, true, impl};
    case ExpImpl::kNatural:
      return {mul_at(Site::kExpArg, m, e_.scale, index), true, impl};
    case ExpImpl::kExp2Fma:
    case ExpImpl::kExp2:
      return {mul_at(Site::kExpArg, m, e_.scale_log2, index), true, impl};
    case ExpImpl::kExp2Scaled:
    case ExpImpl::kExp2ScaledFma:
      return {scaled_log2(m, index), true, impl};
  }
  return {};
}

double SiteArithmetic::base2_lse(double lse, int64_t i) const {
  if (!std::isfinite(lse)) return lse;
  const uint64_t index = e_.idx(p_, i, 0, 2);
  const double ln2 = e_.rd(Site::kLse, std::numbers::ln2, index);
  const double quotient = lse / ln2;
  const double rounded = e_.rd(Site::kLse, quotient, index);
  if (!e_.r[static_cast<int>(Site::kLse)].is_float_rne()) return rounded;
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

double SiteArithmetic::scaled_log2(double s, uint64_t index) const {
  return mul_at(Site::kExpArg, mul_at(Site::kExpArg, s, e_.scale_rounded, index), e_.log2e,
                index + 1);
}

RowShift SiteArithmetic::shift_from_lse(double lse, int64_t i) const {
  const uint64_t index = e_.idx(p_, i, 0, 2);
  const ExpImpl impl = e_.bwd_exp_impl;
  switch (impl) {
    case ExpImpl::kExact:
      return {lse, true, impl};
    case ExpImpl::kNatural:
      return {at(Site::kExpArg, lse, index), true, impl};
    case ExpImpl::kExp2Fma:
    case ExpImpl::kExp2:
    case ExpImpl::kExp2Scaled:
    case ExpImpl::kExp2ScaledFma: {
      const double log2e =
          e_.cfg.lse_log2e == LseLog2e::kFp32Log2e ? e_.log2e : std::numbers::log2e;
      return {mul_at(Site::kExpArg, lse, log2e, index), true, impl};
    }
  }
  return {};
}

namespace {

// x as an fp32 value when it is one exactly: the device functions take fp32 arguments.
std::optional<float> exact_float(double x) {
  const float f = static_cast<float>(x);
  if (static_cast<double>(f) != x) return std::nullopt;
  return f;
}

}  // namespace

bool SiteArithmetic::sm90_at(Site site) const {
  return e_.cfg.device_math == DeviceMath::kSm90 && e_.r[static_cast<int>(site)].is_float_rne();
}

double SiteArithmetic::exp2_at(Site site, double arg, uint64_t index) const {
  const std::optional<float> f = exact_float(arg);
  if (f && sm90_at(site)) {
    const float y = device_math::sm90_ex2_approx_ftz(*f);
    if (traces_) (*traces_)[static_cast<int>(site)].record(formats::fp32, std::exp2(arg), 0, y);
    return y;
  }
  if (f && e_.device_exp2 && e_.r[static_cast<int>(site)].is_float_rne()) {
    const uint32_t bits = std::bit_cast<uint32_t>(*f);
    if (const auto y = e_.cfg.exp2_table->find(bits)) {
      const double value = static_cast<double>(std::bit_cast<float>(*y));
      if (traces_)
        (*traces_)[static_cast<int>(site)].record(formats::fp32, std::exp2(arg), 0, value);
      return value;
    }
    exp2_misses_->push_back(bits);
  }
  return exp_rounded(site, arg, index, /*base2=*/true);
}

double SiteArithmetic::expf_at(Site site, double arg, uint64_t index) const {
  if (const std::optional<float> f = exact_float(arg); f && sm90_at(site)) {
    const float y = device_math::libdevice_expf(*f);
    if (traces_) (*traces_)[static_cast<int>(site)].record(formats::fp32, std::exp(arg), 0, y);
    return y;
  }
  return exp_rounded(site, arg, index, /*base2=*/false);
}

double SiteArithmetic::logf_at(Site site, double l, uint64_t index) const {
  if (const std::optional<float> f = exact_float(l); f && sm90_at(site)) {
    return device_math::libdevice_logf(*f);
  }
  return at(site, std::log(l), index);
}

double SiteArithmetic::log_at(Site site, double l, uint64_t index) const {
  if (const std::optional<float> f = exact_float(l); f && sm90_at(site)) {
    if (const std::optional<float> y = device_math::sm90_fast_logf(*f)) return *y;
  }
  return at(site, std::log(l), index);
}

double SiteArithmetic::log2_at(Site site, double l, uint64_t index) const {
  if (const std::optional<float> f = exact_float(l); f && sm90_at(site)) {
    return device_math::libdevice_log2f(*f);
  }
  return at(site, std::log2(l), index);
}

double SiteArithmetic::div_full_at(Site site, double x, double y, uint64_t index) const {
  const std::optional<float> xf = exact_float(x), yf = exact_float(y);
  if (xf && yf) {
    if (const std::optional<float> q = device_math::sm90_div_full(*xf, *yf)) return *q;
  }
  return div_at(site, x, y, index);
}

double SiteArithmetic::reciprocal_at(Site site, double l, uint64_t index) const {
  if (const std::optional<float> f = exact_float(l); f && e_.cfg.norm_mode == NormMode::kDivFull) {
    return device_math::sm90_rcp_approx_ftz(*f);
  }
  return at(site, 1.0 / l, index);
}

double SiteArithmetic::exp_rounded(Site site, double arg, uint64_t index, bool base2) const {
  const SiteRounder& r = e_.r[static_cast<int>(site)];
  RoundingContext ctx(r.format(), r.rounding(), r.stream(), index);
  const double y = decode(ctx.format(), base2 ? exp2_of(ctx, arg) : exp_of(ctx, arg));
  if (traces_) {
    (*traces_)[static_cast<int>(site)].record(ctx.format(), base2 ? std::exp2(arg) : std::exp(arg),
                                              0, y);
  }
  return y;
}

double SiteArithmetic::cast_p(double p, int64_t i, int64_t j) const {
  if (e_.tiled_p_bits == 0) return at(Site::kPCast, p, e_.idx(p_, i, j, 0));
  const SiteRounder& r = e_.r[static_cast<int>(Site::kPCast)];
  const uint32_t draw =
      tiled_random::p_draw(e_.cfg.seed, static_cast<uint32_t>(p_), static_cast<uint32_t>(i),
                           static_cast<uint32_t>(j), e_.tiled_p_bits);
  const double y = r.round_with_random(p, draw);
  if (traces_) (*traces_)[static_cast<int>(Site::kPCast)].record(r.format(), p, 0, y);
  return y;
}

double SiteArithmetic::prob(double s, const RowShift& shift, uint64_t index) const {
  if (!shift.valid || s == -kInf) return 0.0;
  switch (shift.impl) {
    case ExpImpl::kExact: {
      const double arg = e_.scale * s - shift.offset;
      RoundingContext ctx(e_.r[static_cast<int>(Site::kExp)].format(),
                          e_.r[static_cast<int>(Site::kExp)].rounding(),
                          e_.r[static_cast<int>(Site::kExp)].stream(), index);
      const double y = decode(ctx.format(), exp_of(ctx, arg));
      if (traces_)
        (*traces_)[static_cast<int>(Site::kExp)].record(ctx.format(), std::exp(arg), 0, y);
      return y;
    }
    case ExpImpl::kNatural: {
      const double xs = mul_at(Site::kExpArg, s, e_.scale, index);
      const double arg = add_at(Site::kExpArg, xs, -shift.offset, index + 1);
      return expf_at(Site::kExp, arg, index);
    }
    case ExpImpl::kExp2Fma: {
      // fma(s, c, -mc): s*c exactly, minus mc, one rounding. With an infinite or NaN operand the
      // double fma is that result (TwoSum's error terms would be NaN where it is an infinity).
      if (!std::isfinite(s) || !std::isfinite(e_.scale_log2) || !std::isfinite(shift.offset)) {
        return exp2_at(Site::kExp,
                       at(Site::kExpArg, std::fma(s, e_.scale_log2, -shift.offset), index), index);
      }
      double ph, pl, h, l1, hi, lo;
      two_prod(s, e_.scale_log2, ph, pl);
      two_sum(ph, -shift.offset, h, l1);
      two_sum(h, l1 + pl, hi, lo);
      const double arg = at_exact(Site::kExpArg, hi, lo, index);
      return exp2_at(Site::kExp, arg, index);
    }
    case ExpImpl::kExp2: {
      const double xs = mul_at(Site::kExpArg, s, e_.scale_log2, index);
      const double arg = add_at(Site::kExpArg, xs, -shift.offset, index + 1);
      return exp2_at(Site::kExp, arg, index);
    }
    case ExpImpl::kExp2Scaled: {
      const double arg = add_at(Site::kExpArg, scaled_log2(s, index), -shift.offset, index + 2);
      return exp2_at(Site::kExp, arg, index);
    }
    case ExpImpl::kExp2ScaledFma: {
      // fma(t, log2e, -shift) with t = round(s*scale).
      const double t = mul_at(Site::kExpArg, s, e_.scale_rounded, index);
      return exp2_at(Site::kExp, fma_at(Site::kExpArg, t, e_.log2e, -shift.offset, index + 2),
                     index);
    }
  }
  return 0.0;
}

double SiteArithmetic::block_max(const double* srow, int64_t n) const {
  double rm = -kInf;
  for (int64_t j = 0; j < n; ++j) rm = std::max(rm, srow[j]);
  if (!e_.cfg.beta_rowmax.enabled) return rm;
  return beta_block_max(srow, n, rm, e_.cfg.beta_rowmax, e_.scale);
}

}  // namespace simprec::attention
