// lse_impl=shift-log against a plain float kernel written here: standard attention whose row max
// is kept as m = fp32(max S scale), with the LSE fp32(m + logf(l)); the log correctly rounded to
// fp32 by MPFR (an oracle the emulation does not share). The emulation must give every LSE bit
// for bit, and the exact LSE (m scale + log l in double, rounded once) must not.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

float logf_rounded(float x) {
  mpfr_t y;
  mpfr_init2(y, 24);
  mpfr_set_flt(y, x, MPFR_RNDN);
  mpfr_log(y, y, MPFR_RNDN);
  const float r = mpfr_get_flt(y, MPFR_RNDN);
  mpfr_clear(y);
  return r;
}

float expf_rounded(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}

TEST(LseShiftLog, IsFp32OfTheRoundedScaledMaxPlusLogfOfL) {
  const AttentionShape shape{1, 2, 47, 47, 16, 16};
  const AttentionInputs in = inputs::generate("normal", shape, 3, false);
  const AttentionConfig c = parse_numerics("torch-math,lse_impl=shift-log", formats::bf16);
  const AttentionOutputs out = run_attention(in, c);
  const AttentionOutputs exact = run_attention(in, parse_numerics("torch-math", formats::bf16));
  const AttentionInputs r = round_inputs(in, c);
  int64_t equal = 0, exact_equal = 0, rows = 0;
  for (int64_t p = 0; p < shape.problems(); ++p) {
    for (int64_t i = 0; i < shape.nq; ++i) {
      std::vector<float> t(shape.nk);
      float m = -INFINITY;
      for (int64_t j = 0; j < shape.nk; ++j) {
        float s = 0.0f;
        for (int64_t x = 0; x < shape.d; ++x) {
          s = std::fma(static_cast<float>(r.q[(p * shape.nq + i) * shape.d + x]),
                       static_cast<float>(r.k[(p * shape.nk + j) * shape.d + x]), s);
        }
        t[j] = s * 0.25f;
        m = std::max(m, t[j]);
      }
      float l = 0.0f;
      for (int64_t j = 0; j < shape.nk; ++j) l += expf_rounded(t[j] - m);
      const float lse = m + logf_rounded(l);
      equal += out.lse[p * shape.nq + i] == static_cast<double>(lse);
      exact_equal += exact.lse[p * shape.nq + i] == static_cast<double>(lse);
      ++rows;
    }
  }
  EXPECT_EQ(equal, rows);
  EXPECT_LT(exact_equal, rows);
}

TEST(LseShiftLog, NeedsANaturalExponent) {
  EXPECT_THROW((void)parse_numerics("fa2,lse_impl=shift-log", formats::bf16),
               std::invalid_argument);
}

}  // namespace
}  // namespace simprec::attention
