// beta_block_max (paper A's beta-rowmax) in both arithmetics: hand-derived cases, where the fp32
// and fp64 definitions part, and the threshold and shifted max against MPFR on random floats.
#include "lib/attention/beta_rowmax.hpp"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "lib/attention/preset.hpp"

namespace simprec::attention {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

BetaRowmax make(BetaArithmetic arithmetic, double beta = 2.0, double eps = 1e-3) {
  return BetaRowmax{true, beta, eps, arithmetic};
}

double block_max(std::vector<double> scores, const BetaRowmax& b, double scale = 1.0) {
  const double row_max = *std::max_element(scores.begin(), scores.end());
  return beta_block_max(scores.data(), static_cast<int64_t>(scores.size()), row_max, b, scale);
}

class BothArithmetics : public ::testing::TestWithParam<BetaArithmetic> {};

TEST_P(BothArithmetics, PaperARules) {
  const BetaArithmetic a = GetParam();
  EXPECT_EQ(block_max({1.0, 0.5, -kInf}, make(a)), 1.0);      // no repeat
  EXPECT_EQ(block_max({1.0, 0.5, 1.0}, make(a)), 2.0);        // repeated: beta * max
  EXPECT_EQ(block_max({3.0, 3.0}, make(a, 7.0)), 21.0);       // their beta = 7
  EXPECT_EQ(block_max({-1.0, -1.0, -3.0}, make(a)), 0.0);     // negative max: 0
  EXPECT_EQ(block_max({-kInf, -kInf}, make(a)), -kInf);       // all masked
  EXPECT_EQ(block_max({5.0, 4.99, 0.0}, make(a)), 5.0);       // 0.01 apart, eps 1e-3
  EXPECT_EQ(block_max({5.0, 4.99, 0.0}, make(a), 0.05), 10);  // window eps / scale = 0.02
  EXPECT_EQ(block_max({2.0}, make(a)), 2.0);                  // a max alone never repeats
}
INSTANTIATE_TEST_SUITE_P(BetaRowmax, BothArithmetics,
                         ::testing::Values(BetaArithmetic::kFp64, BetaArithmetic::kFp32));

TEST(BetaRowmax, ThresholdRoundedToFloatCountsTheFloatBelowTheExactOne) {
  // eps = 2.75 * 2^-24 (a float), max 1: the exact threshold 1 - 2.75 * 2^-24 lies a quarter ulp
  // above the float f = 1 - 3 * 2^-24, so fp32 rounds it down to f and a score f repeats the
  // max; in fp64 the threshold is exact and f falls short of it.
  const double eps = 2.75 * std::ldexp(1.0, -24);
  const double f = 1.0 - 3 * std::ldexp(1.0, -24);
  EXPECT_EQ(block_max({1.0, f}, make(BetaArithmetic::kFp32, 2.0, eps)), 2.0);
  EXPECT_EQ(block_max({1.0, f}, make(BetaArithmetic::kFp64, 2.0, eps)), 1.0);
}

TEST(BetaRowmax, ShiftedMaxIsOneFloatProductInFp32) {
  // beta 3, max 1 + 2^-23: the product 3 + 1.5 * 2^-22 is a tie between 3 + 2^-22 (odd) and
  // 3 + 2^-21 (even) in fp32; fp64 keeps it exactly.
  const double m = 1.0 + std::ldexp(1.0, -23);
  EXPECT_EQ(block_max({m, m}, make(BetaArithmetic::kFp32, 3.0)), 3.0 + std::ldexp(1.0, -21));
  EXPECT_EQ(block_max({m, m}, make(BetaArithmetic::kFp64, 3.0)), 3.0 + 1.5 * std::ldexp(1.0, -22));
  // beta 1 + 2^-30 is 1 in fp32.
  const double beta = 1.0 + std::ldexp(1.0, -30);
  EXPECT_EQ(block_max({3.0, 3.0}, make(BetaArithmetic::kFp32, beta)), 3.0);
  EXPECT_EQ(block_max({3.0, 3.0}, make(BetaArithmetic::kFp64, beta)), 3.0 * beta);
}

TEST(BetaRowmax, Fp32RefusesScoresThatAreNotFloats) {
  const double m = 1.0 + std::ldexp(1.0, -40);
  EXPECT_THROW(block_max({m, 0.0}, make(BetaArithmetic::kFp32)), std::domain_error);
  EXPECT_EQ(block_max({m, 0.0}, make(BetaArithmetic::kFp64)), m);
}

TEST(BetaRowmax, CudaFa2PresetUsesFp32) {
  EXPECT_EQ(make_preset("cuda-fa2", formats::bf16).beta_rowmax.arithmetic, BetaArithmetic::kFp32);
  EXPECT_EQ(make_preset("fa2", formats::bf16).beta_rowmax.arithmetic, BetaArithmetic::kFp64);
}

// MPFR's correctly rounded value of an exact expression, as float or double.
class Exact {
 public:
  Exact() { mpfr_inits2(600, a_, b_, static_cast<mpfr_ptr>(nullptr)); }
  ~Exact() { mpfr_clears(a_, b_, static_cast<mpfr_ptr>(nullptr)); }
  // RN_T(x - RN_T(e)), T = float or double (600 bits hold every such difference exactly).
  float difference_f32(float x, double e) {
    mpfr_set_d(b_, e, MPFR_RNDN);
    const float e32 = mpfr_get_flt(b_, MPFR_RNDN);
    mpfr_set_flt(a_, x, MPFR_RNDN);
    mpfr_set_flt(b_, e32, MPFR_RNDN);
    mpfr_sub(a_, a_, b_, MPFR_RNDN);
    return mpfr_get_flt(a_, MPFR_RNDN);
  }
  double difference_f64(double x, double e) {
    mpfr_set_d(a_, x, MPFR_RNDN);
    mpfr_set_d(b_, e, MPFR_RNDN);
    mpfr_sub(a_, a_, b_, MPFR_RNDN);
    return mpfr_get_d(a_, MPFR_RNDN);
  }
  double product_f64(double beta, double x) {
    mpfr_set_d(a_, x, MPFR_RNDN);
    mpfr_mul_d(a_, a_, beta, MPFR_RNDN);
    return mpfr_get_d(a_, MPFR_RNDN);
  }
  // RN32(RN32(beta) * x).
  float product_f32(double beta, float x) {
    mpfr_set_d(b_, beta, MPFR_RNDN);
    mpfr_set_flt(b_, mpfr_get_flt(b_, MPFR_RNDN), MPFR_RNDN);
    mpfr_set_flt(a_, x, MPFR_RNDN);
    mpfr_mul(a_, a_, b_, MPFR_RNDN);
    return mpfr_get_flt(a_, MPFR_RNDN);
  }

 private:
  mpfr_t a_, b_;
};

float random_float(std::mt19937_64& rng) {
  for (;;) {
    const auto bits = static_cast<uint32_t>(rng());
    float x;
    std::memcpy(&x, &bits, sizeof x);
    if (std::isfinite(x) && x != 0) return x;
  }
}

// The threshold t is pinned by two rows: {m, t} must repeat and {m, next float below t} not.
// Fixed seed; every case is an exact comparison, so there is no statistical margin.
TEST(BetaRowmax, ThresholdAndShiftedMaxMatchMpfrOnRandomFloats) {
  std::mt19937_64 rng(20261123);
  Exact exact;
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const float m = random_float(rng);
    // eps spread over many binades below and above |m|, and often near its ulp.
    const double eps = std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng),
                                  std::ilogb(m) - 30 + static_cast<int>(rng() % 40));
    const double beta = std::uniform_real_distribution<double>(1.0, 8.0)(rng);
    {  // fp32
      const BetaRowmax b = make(BetaArithmetic::kFp32, beta, eps);
      const float t = exact.difference_f32(m, eps);
      if (std::isinf(t)) continue;  // eps or the difference beyond the float range
      const float below = std::nextafter(t, -std::numeric_limits<float>::infinity());
      const double repeated = m > 0 ? exact.product_f32(beta, m) : 0.0;
      if (repeated == m) continue;  // the outcome would not tell repeat from not
      ASSERT_EQ(block_max({m, t}, b), repeated) << "m " << m << " eps " << eps;
      ASSERT_EQ(block_max({m, below}, b), m) << "m " << m << " eps " << eps;
    }
    {  // fp64
      const BetaRowmax b = make(BetaArithmetic::kFp64, beta, eps);
      const double t = exact.difference_f64(m, eps);
      const double below = std::nextafter(t, -kInf);
      const double repeated = m > 0 ? exact.product_f64(beta, m) : 0.0;
      ASSERT_EQ(block_max({m, t}, b), repeated);
      ASSERT_EQ(block_max({m, below}, b), m);
    }
    ++checked;
  }
  EXPECT_GT(checked, 150000);
}

}  // namespace
}  // namespace simprec::attention
