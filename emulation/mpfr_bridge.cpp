#include "emulation/mpfr_bridge.hpp"

#include <gmp.h>

namespace simprec {

Unrounded unrounded_from_mpfr(const mpfr_t x, int ternary) {
  // Far beyond any format: 2^(+-2^40) rounds like the true overflowed/underflowed value.
  constexpr int64_t kFar = int64_t{1} << 40;
  const bool negative = mpfr_signbit(x) != 0;
  if (mpfr_nan_p(x)) return Unrounded::nan();
  if (mpfr_inf_p(x)) {
    return mpfr_overflow_p() ? Unrounded::finite(negative, kFar, 1) : Unrounded::infinity(negative);
  }
  if (mpfr_zero_p(x)) {
    return ternary != 0 || mpfr_underflow_p() ? Unrounded::finite(negative, -kFar, 1)
                                              : Unrounded::zero(negative);
  }
  mpz_t z;
  mpz_init(z);
  const mpfr_exp_t e = mpfr_get_z_2exp(z, x);
  mpz_abs(z, z);
  uint128 sig = 0;
  // Export as 64-bit words, most significant first; precision <= 120 bits fits in two.
  uint64_t words[2] = {0, 0};
  size_t count = 0;
  mpz_export(words, &count, 1, sizeof(uint64_t), 0, 0, z);
  for (size_t i = 0; i < count; ++i) sig = (sig << 64) | words[i];
  mpz_clear(z);
  int64_t exponent = e;
  if (ternary != 0) {  // the exact value lies strictly beyond |x|: jam one more bit below
    sig = (sig << 1) | 1;
    --exponent;
  }
  return Unrounded::finite(negative, exponent, sig);
}

}  // namespace simprec
