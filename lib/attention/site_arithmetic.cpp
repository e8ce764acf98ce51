#include "lib/attention/site_arithmetic.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "emulation/device_math/sm90_mufu.hpp"
#include "emulation/elementary.hpp"
#include "emulation/tiled_random.hpp"
#include "lib/attention/beta_rowmax.hpp"

namespace simprec::attention {

RowShift SiteArithmetic::shift_from_max(double m, int64_t i) const {
  if (m == -kInf) return {};
  const ExpArg& impl = *e_.cfg.exp_impl;
  return {impl.shift_from_max(*this, m, e_.idx(p_, i, 0, 1)), true, &impl};
}

RowShift SiteArithmetic::shift_from_lse(double lse, int64_t i) const {
  const ExpArg& impl = *e_.bwd_exp_impl;
  return {impl.shift_from_lse(*this, lse, e_.idx(p_, i, 0, 2)), true, &impl};
}

double SiteArithmetic::base2_shift_from_lse(double lse, uint64_t index) const {
  return mul_at(Site::kExpArg, lse, e_.cfg.lse_log2e->log2e(e_), index);
}

double SiteArithmetic::scaled_log2(double s, uint64_t index) const {
  return mul_at(Site::kExpArg, mul_at(Site::kExpArg, s, e_.scale_rounded, index), e_.log2e,
                index + 1);
}

namespace {

// x as an fp32 value when it is one exactly: the device functions take fp32 arguments.
std::optional<float> exact_float(double x) {
  const float f = static_cast<float>(x);
  if (static_cast<double>(f) != x) return std::nullopt;
  return f;
}

uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}

}  // namespace

bool SiteArithmetic::device_at(Site site) const {
  return e_.r[static_cast<int>(site)].is_float_rne();
}

bool SiteArithmetic::device_f64_at(Site site) const {
  return e_.r[static_cast<int>(site)].is_identity();
}

std::optional<float> SiteArithmetic::supplied(DeviceFn fn, uint64_t key) const {
  const auto& table = e_.cfg.device_tables[static_cast<int>(fn)];
  if (!table || (fn == DeviceFn::kExp2 && !e_.device_exp2)) return std::nullopt;
  if (const std::optional<uint32_t> y = table->find(key)) return std::bit_cast<float>(*y);
  (*misses_)[static_cast<int>(fn)].push_back(key);
  return std::nullopt;
}

double SiteArithmetic::exp2_at(Site site, double arg, uint64_t index) const {
  const std::optional<float> f = exact_float(arg);
  if (f && device_at(site)) {
    std::optional<float> y = supplied(DeviceFn::kExp2, bits(*f));
    if (!y) y = e_.cfg.device_math->exp2(*f);
    if (y) return traced(site, formats::fp32, std::exp2(arg), *y);
  } else if (device_f64_at(site)) {
    if (const std::optional<double> y = e_.cfg.device_math->exp2_f64(arg))
      return traced(site, formats::fp64, std::exp2(arg), *y);
  }
  return exp_rounded(site, arg, index, /*base2=*/true);
}

double SiteArithmetic::expf_at(Site site, double arg, uint64_t index) const {
  const std::optional<float> f = exact_float(arg);
  if (f && device_at(site)) {
    std::optional<float> y = supplied(DeviceFn::kExp, bits(*f));
    if (!y) y = e_.cfg.device_math->exp(*f);
    if (y) return traced(site, formats::fp32, std::exp(arg), *y);
  } else if (device_f64_at(site)) {
    if (const std::optional<double> y = e_.cfg.device_math->exp_f64(arg))
      return traced(site, formats::fp64, std::exp(arg), *y);
  }
  return exp_rounded(site, arg, index, /*base2=*/false);
}

double SiteArithmetic::tanh_at(Site site, double x, uint64_t index) const {
  const std::optional<float> f = exact_float(x);
  if (f && device_at(site)) {
    if (const std::optional<float> y = e_.cfg.device_math->tanh(*f))
      return traced(site, formats::fp32, std::tanh(x), *y);
  }
  const SiteRounder& r = e_.r[static_cast<int>(site)];
  RoundingContext ctx(r.format(), r.rounding(), r.stream(), index);
  const double y = decode(ctx.format(), tanh_of(ctx, x));
  if (traces_) (*traces_)[static_cast<int>(site)].record(ctx.format(), std::tanh(x), 0, y);
  if (probe_) [[unlikely]]
    probe_->rounded(site, std::tanh(x), y);
  return y;
}

// The logarithms' device values are returned as the device gives them, untraced (the probe
// records them); the fallback rounds log(l) in double at the site.
double SiteArithmetic::logf_at(Site site, double l, uint64_t index) const {
  const std::optional<float> f = exact_float(l);
  if (f && device_at(site)) {
    std::optional<float> y = supplied(DeviceFn::kLog, bits(*f));
    if (!y) y = e_.cfg.device_math->log(*f);
    if (y) return probed(site, std::log(l), *y);
  } else if (device_f64_at(site)) {
    if (const std::optional<double> y = e_.cfg.device_math->log_f64(l))
      return probed(site, std::log(l), *y);
  }
  return at(site, std::log(l), index);
}

double SiteArithmetic::log_at(Site site, double l, uint64_t index) const {
  const std::optional<float> f = exact_float(l);
  if (f && device_at(site)) {
    std::optional<float> y = supplied(DeviceFn::kLog, bits(*f));
    if (!y) y = e_.cfg.device_math->fast_log(*f);
    if (y) return probed(site, std::log(l), *y);
  } else if (device_f64_at(site)) {
    if (const std::optional<double> y = e_.cfg.device_math->log_f64(l))
      return probed(site, std::log(l), *y);
  }
  return at(site, std::log(l), index);
}

double SiteArithmetic::log2_at(Site site, double l, uint64_t index) const {
  const std::optional<float> f = exact_float(l);
  if (f && device_at(site)) {
    std::optional<float> y = supplied(DeviceFn::kLog2, bits(*f));
    if (!y) y = e_.cfg.device_math->log2(*f);
    if (y) return probed(site, std::log2(l), *y);
  } else if (device_f64_at(site)) {
    if (const std::optional<double> y = e_.cfg.device_math->log2_f64(l))
      return probed(site, std::log2(l), *y);
  }
  return at(site, std::log2(l), index);
}

double SiteArithmetic::rcpf_at(Site site, double x, uint64_t index) const {
  if (const std::optional<float> f = exact_float(x); f && device_at(site)) {
    std::optional<float> y = supplied(DeviceFn::kRcp, bits(*f));
    if (!y) y = e_.cfg.device_math->rcp(*f);
    if (y) return traced(site, formats::fp32, 1.0 / x, *y);
  }
  return at(site, 1.0 / x, index);
}

double SiteArithmetic::divf_at(Site site, double x, double y, uint64_t index) const {
  const std::optional<float> xf = exact_float(x), yf = exact_float(y);
  if (xf && yf && device_at(site)) {
    std::optional<float> q = supplied(DeviceFn::kDiv, device_key(bits(*xf), bits(*yf)));
    if (!q) q = e_.cfg.device_math->div(*xf, *yf);
    if (q) return traced(site, formats::fp32, x / y, *q);
  }
  return div_at(site, x, y, index);
}

std::optional<float> SiteArithmetic::device_rcp(float y) const {
  if (const std::optional<float> r = supplied(DeviceFn::kRcp, bits(y))) return r;
  return e_.cfg.device_math->rcp(y);
}

double SiteArithmetic::div_full_at(Site site, double x, double y, uint64_t index) const {
  const std::optional<float> xf = exact_float(x), yf = exact_float(y);
  if (xf && yf) {
    if (const std::optional<float> r = device_rcp(*yf)) return probed(site, x / y, *xf * *r);
    return probed(site, x / y, device_math::sm90_div_full(*xf, *yf));
  }
  return div_at(site, x, y, index);
}

double SiteArithmetic::v_descaled(double o, int64_t c, uint64_t index) const {
  if (!e_.scales || !e_.cfg.quant.v) return o;
  return mul_at(Site::kONorm, o, e_.scales->v_scale(p_, c), index);
}

double SiteArithmetic::exp_rounded(Site site, double arg, uint64_t index, bool base2) const {
  const SiteRounder& r = e_.r[static_cast<int>(site)];
  RoundingContext ctx(r.format(), r.rounding(), r.stream(), index);
  const double y = decode(ctx.format(), base2 ? exp2_of(ctx, arg) : exp_of(ctx, arg));
  if (traces_) {
    (*traces_)[static_cast<int>(site)].record(ctx.format(), base2 ? std::exp2(arg) : std::exp(arg),
                                              0, y);
  }
  if (probe_) [[unlikely]]
    probe_->rounded(site, base2 ? std::exp2(arg) : std::exp(arg), y);
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
  if (probe_) [[unlikely]]
    probe_->rounded(Site::kPCast, p, y);
  return y;
}

double SiteArithmetic::block_max(const double* srow, int64_t n) const {
  double rm = -kInf;
  for (int64_t j = 0; j < n; ++j) rm = std::max(rm, srow[j]);
  if (!e_.cfg.beta_rowmax.enabled) return rm;
  return beta_block_max(srow, n, rm, e_.cfg.beta_rowmax, e_.scale);
}

}  // namespace simprec::attention
