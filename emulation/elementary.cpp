#include "emulation/elementary.hpp"

#include <mpfr.h>

#include <cmath>
#include <limits>

#include "emulation/mpfr_bridge.hpp"

namespace simprec {
namespace {

using MpfrFunction = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

// Rounds f(x) given the libm approximation y of it, falling back to MPFR when the +-4 ulp
// interval around y straddles a rounding boundary.
uint64_t round_via_interval(RoundingContext& ctx, double x, double y, MpfrFunction exact) {
  const uint32_t random = ctx.draw();
  const Format& f = ctx.format();
  if (std::isfinite(y) && std::fabs(y) >= std::numeric_limits<double>::min()) {
    Unrounded lo = unrounded_from_double(y);
    Unrounded hi = lo;
    lo.significand -= 4;  // a normal double's significand is >= 2^52
    hi.significand += 4;
    const uint64_t a = round_to_format(f, lo, ctx.rounding(), random);
    const uint64_t b = round_to_format(f, hi, ctx.rounding(), random);
    if (a == b) return a;
  }
  mpfr_t mx, my;
  mpfr_init2(mx, 53);
  mpfr_init2(my, 120);
  mpfr_set_d(mx, x, MPFR_RNDN);  // exact
  mpfr_clear_flags();
  const int ternary = exact(my, mx, MPFR_RNDZ);
  const Unrounded u = unrounded_from_mpfr(my, ternary);
  mpfr_clear(mx);
  mpfr_clear(my);
  return round_to_format(f, u, ctx.rounding(), random);
}

}  // namespace

uint64_t exp_of(RoundingContext& ctx, double x) {
  return round_via_interval(ctx, x, std::exp(x), mpfr_exp);
}
uint64_t exp2_of(RoundingContext& ctx, double x) {
  return round_via_interval(ctx, x, std::exp2(x), mpfr_exp2);
}
uint64_t log_of(RoundingContext& ctx, double x) {
  return round_via_interval(ctx, x, std::log(x), mpfr_log);
}

uint64_t exp(RoundingContext& ctx, uint64_t a) {
  return exp_of(ctx, decode(ctx.format(), a));
}
uint64_t exp2(RoundingContext& ctx, uint64_t a) {
  return exp2_of(ctx, decode(ctx.format(), a));
}
uint64_t log(RoundingContext& ctx, uint64_t a) {
  return log_of(ctx, decode(ctx.format(), a));
}

}  // namespace simprec
