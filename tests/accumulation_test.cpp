// ExactAccumulator and the accumulation models against MPFR:
// - ExactAccumulator's exact_sum equals MPFR's exact sum (a 5000-bit MPFR sum is exact for
//   every product of doubles), up to the documented sticky jam;
// - the exact model equals that sum rounded once (every deterministic mode);
// - the sequential model equals the chain acc <- round(acc + a_i b_i) done in MPFR, and the
//   pairwise and Kahan models equal their hand-written trees/recurrences in MPFR;
// - signed zeros follow IEEE 754 §6.3 (exact zero sums: -0 only when every term is -0, or in
//   round-down).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "emulation/accumulation.hpp"
#include "emulation/exact_accumulator.hpp"
#include "emulation/round.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;

constexpr mpfr_prec_t kExactPrecision = 5000;

struct Vectors {
  std::vector<double> a, b;
  double c;
};

Vectors random_vectors(std::mt19937_64& rng, size_t n, int exponent_spread) {
  Vectors v;
  auto value = [&] {
    if (rng() % 12 == 0) return (rng() & 1) ? -0.0 : 0.0;  // signed zeros among the terms
    const int e = static_cast<int>(rng() % (2 * exponent_spread + 1)) - exponent_spread;
    const double m = 1 + static_cast<double>(rng() >> 11) * 0x1p-53;
    return std::ldexp(m, e) * ((rng() & 1) ? -1 : 1);
  };
  for (size_t i = 0; i < n; ++i) {
    v.a.push_back(value());
    v.b.push_back(value());
  }
  // Cancel on purpose now and then: append the negation of an earlier product.
  if (n > 2 && (rng() & 1)) {
    v.a.push_back(-v.a[0]);
    v.b.push_back(v.b[0]);
  }
  v.c = value();
  return v;
}

// c + sum a_i b_i exactly.
void exact_sum(mpfr_ptr sum, const Vectors& v) {
  mpfr_set_d(sum, v.c, MPFR_RNDN);
  mpfr_t p;
  mpfr_init2(p, 128);
  for (size_t i = 0; i < v.a.size(); ++i) {
    mpfr_set_d(p, v.a[i], MPFR_RNDN);
    if (mpfr_mul_d(p, p, v.b[i], MPFR_RNDN) != 0) throw std::logic_error("inexact product");
    if (mpfr_add(sum, sum, p, MPFR_RNDN) != 0) throw std::logic_error("inexact sum");
  }
  mpfr_clear(p);
}

bool same(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) ||
         std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
}

const Format kFormats[] = {formats::bf16,     formats::fp16, formats::e4m3fn,
                           formats::e5m2fnuz, formats::fp32, formats::fp64};

TEST(ExactAccumulator, ExactSumMatchesMpfr) {
  std::mt19937_64 rng(1);
  mpfr_t sum, got, lo, hi;
  mpfr_inits2(kExactPrecision, sum, got, lo, hi, static_cast<mpfr_ptr>(nullptr));
  for (int trial = 0; trial < 3000; ++trial) {
    const int spread = trial % 3 == 0 ? 1000 : trial % 3 == 1 ? 60 : 5;
    const Vectors v = random_vectors(rng, 1 + rng() % 40, spread);
    ExactAccumulator acc;
    acc.add(v.c);
    for (size_t i = 0; i < v.a.size(); ++i) acc.add_product(v.a[i], v.b[i]);
    exact_sum(sum, v);
    const Unrounded u = acc.exact_sum();
    if (mpfr_zero_p(sum)) {
      EXPECT_EQ(u.kind, Unrounded::Kind::kZero);
      continue;
    }
    ASSERT_EQ(u.kind, Unrounded::Kind::kFinite);
    // got = significand * 2^exponent; with a jammed bit 0 the exact value lies strictly
    // between (significand -+ 1) * 2^exponent.
    mpfr_set_ui(got, static_cast<unsigned long>(u.significand >> 64), MPFR_RNDN);
    mpfr_mul_2ui(got, got, 64, MPFR_RNDN);
    mpfr_add_ui(got, got, static_cast<unsigned long>(static_cast<uint64_t>(u.significand)),
                MPFR_RNDN);
    mpfr_mul_2si(got, got, u.exponent, MPFR_RNDN);
    if (u.negative) mpfr_neg(got, got, MPFR_RNDN);
    if (mpfr_equal_p(got, sum)) continue;
    ASSERT_TRUE(u.significand & 1) << "inexact without a sticky bit, trial " << trial;
    ASSERT_GE(highest_bit(u.significand), 100) << "a jammed sum keeps >= 100 bits";
    mpfr_sub(hi, sum, got, MPFR_RNDN);  // exact at 5000 bits
    mpfr_set_ui_2exp(lo, 1, u.exponent, MPFR_RNDN);
    EXPECT_LT(mpfr_cmpabs(hi, lo), 0)  // |exact - got| < one unit of the jammed bit
        << "trial " << trial;
  }
  mpfr_clears(sum, got, lo, hi, static_cast<mpfr_ptr>(nullptr));
}

TEST(ExactAccumulator, ExtremesAndSpecials) {
  ExactAccumulator acc;
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double big = std::numeric_limits<double>::max();
  acc.add_product(tiny, tiny);  // 2^-2148
  acc.add_product(big, big);    // ~2^2048
  acc.add_product(-big, big);
  const Unrounded u = acc.exact_sum();
  ASSERT_EQ(u.kind, Unrounded::Kind::kFinite);
  EXPECT_EQ(u.significand & (u.significand - 1), 0u);  // a power of two: exactly 2^-2148
  EXPECT_EQ(u.exponent + highest_bit(u.significand), -2148);
  acc.clear();
  acc.add(INFINITY);
  EXPECT_EQ(acc.exact_sum().kind, Unrounded::Kind::kInfinity);
  acc.add(-INFINITY);
  EXPECT_EQ(acc.exact_sum().kind, Unrounded::Kind::kNan);
  acc.clear();
  acc.add_product(0.0, INFINITY);
  EXPECT_EQ(acc.exact_sum().kind, Unrounded::Kind::kNan);
  acc.clear();
  acc.add_product(-2.0, INFINITY);
  EXPECT_TRUE(acc.exact_sum().negative);
  acc.clear();
  acc.add(NAN);
  EXPECT_EQ(acc.exact_sum().kind, Unrounded::Kind::kNan);
}

// The oracle's result for `eval` in `mode`, as a double.
template <class Eval>
double oracle_value(oracle::Oracle& o, RoundingMode mode, Eval&& eval) {
  return oracle::decode(o.spec(), o.round(mode, eval));
}

TEST(Accumulation, ExactModelIsTheExactSumRoundedOnce) {
  std::mt19937_64 rng(2);
  auto model = make_accumulation("exact");
  mpfr_t sum;
  mpfr_init2(sum, kExactPrecision);
  for (const Format& f : kFormats) {
    oracle::Oracle o(f);
    for (int trial = 0; trial < 400; ++trial) {
      const Vectors v = random_vectors(rng, 1 + rng() % 30, trial % 2 ? 8 : 40);
      exact_sum(sum, v);
      if (mpfr_zero_p(sum)) continue;  // zero signs: see SignedZeros
      uint64_t expected[6];
      o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, sum, rnd); }, expected);
      for (int k = 0; k < 6; ++k) {
        RoundingContext ctx(f, Rounding{oracle::kModes[k]});
        const double got = model->dot(v.a, v.b, v.c, ctx);
        ASSERT_TRUE(same(got, oracle::decode(o.spec(), expected[k])))
            << f.name() << " " << oracle::mode_name(oracle::kModes[k]) << " trial " << trial;
      }
    }
  }
  mpfr_clear(sum);
}

// Hand chains in MPFR, each step rounded by the oracle.
struct Chains {
  oracle::Oracle& o;
  RoundingMode mode;
  oracle::Inputs in;
  double round(double x) {
    in.set(x);
    return oracle_value(o, mode,
                        [&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, in.x, rnd); });
  }
  double fma(double x, double y, double z) {  // round(x*y + z)
    in.set(x, y, z);
    return oracle_value(
        o, mode, [&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_fma(r, in.x, in.y, in.w, rnd); });
  }
  double add(double x, double y) {
    in.set(x, y);
    return oracle_value(o, mode,
                        [&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_add(r, in.x, in.y, rnd); });
  }
  double sequential(const Vectors& v) {
    double acc = round(v.c);
    for (size_t i = 0; i < v.a.size(); ++i) acc = fma(v.a[i], v.b[i], acc);
    return acc;
  }
  double tree(const std::vector<double>& p, size_t begin, size_t end) {
    if (end - begin == 1) return p[begin];
    const size_t half = (end - begin) / 2;
    return add(tree(p, begin, begin + half), tree(p, begin + half, end));
  }
  std::vector<double> products(const Vectors& v) {
    std::vector<double> p;
    for (size_t i = 0; i < v.a.size(); ++i) {  // round(a*b): a product rounded alone
      in.set(v.a[i], v.b[i]);
      p.push_back(oracle_value(
          o, mode, [&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_mul(r, in.x, in.y, rnd); }));
    }
    return p;
  }
  double pairwise(const Vectors& v) {
    const double c = round(v.c);
    if (v.a.empty()) return c;
    const auto p = products(v);
    return add(tree(p, 0, p.size()), c);
  }
  double kahan(const Vectors& v) {
    double sum = round(v.c), comp = 0;
    for (double p : products(v)) {
      const double y = add(p, -comp);
      const double t = add(sum, y);
      comp = add(add(t, -sum), -y);
      sum = t;
    }
    return sum;
  }
};

TEST(Accumulation, SequentialPairwiseKahanMatchHandChainsInMpfr) {
  std::mt19937_64 rng(3);
  auto seq = make_accumulation("sequential");
  auto pw = make_accumulation("pairwise");
  auto kh = make_accumulation("kahan");
  for (const Format& f : kFormats) {
    oracle::Oracle o(f);
    for (RoundingMode m : oracle::kModes) {
      Chains ch{o, m, {}};
      for (int trial = 0; trial < 60; ++trial) {
        const Vectors v = random_vectors(rng, rng() % 25, trial % 2 ? 4 : 30);
        RoundingContext ctx(f, Rounding{m});
        ASSERT_TRUE(same(seq->dot(v.a, v.b, v.c, ctx), ch.sequential(v)))
            << f.name() << " " << oracle::mode_name(m) << " trial " << trial;
        ASSERT_TRUE(same(pw->dot(v.a, v.b, v.c, ctx), ch.pairwise(v)))
            << "pairwise " << f.name() << " " << oracle::mode_name(m) << " trial " << trial;
        ASSERT_TRUE(same(kh->dot(v.a, v.b, v.c, ctx), ch.kahan(v)))
            << "kahan " << f.name() << " " << oracle::mode_name(m) << " trial " << trial;
      }
    }
  }
}

TEST(Accumulation, SignedZeros) {
  const auto rne = RoundingMode::kNearestEven, rdn = RoundingMode::kDown;
  struct Case {
    std::vector<double> a, b;
    double c;
    RoundingMode mode;
    bool negative;  // expected sign of the zero result
  } cases[] = {
      {{}, {}, -0.0, rne, true},  // nothing added to -0
      {{}, {}, 0.0, rdn, false},
      {{-0.0, 0.0}, {1.0, -1.0}, -0.0, rne, true},  // every term -0
      {{-0.0}, {1.0}, 0.0, rne, false},             // +0 + -0
      {{-0.0}, {1.0}, 0.0, rdn, true},
      {{0.0}, {1.0}, -0.0, rne, false},
      {{1.0, -1.0}, {1.0, 1.0}, 0.0, rne, false},  // cancellation
      {{1.0, -1.0}, {1.0, 1.0}, 0.0, rdn, true},
      {{1.0, -1.0}, {1.0, 1.0}, -0.0, rne, false},
      {{0.0, 0.0}, {1.0, 2.0}, 0.0, rdn, false},  // every term +0, even in rdn
  };
  // Kahan is left out: its literal IEEE recurrence (y = p - comp with comp = +0) makes -0 in
  // rdn from +0 terms, as the same recurrence does in hardware; it is checked against that
  // recurrence in MPFR above.
  for (const char* name : {"exact", "sequential", "pairwise"}) {
    auto model = make_accumulation(name);
    for (const auto& c : cases) {
      for (const Format& f : {formats::bf16, formats::fp32}) {
        RoundingContext ctx(f, Rounding{c.mode});
        const double r = model->dot(c.a, c.b, c.c, ctx);
        EXPECT_EQ(r, 0.0) << name;
        EXPECT_EQ(std::signbit(r), c.negative)
            << name << " " << f.name() << " " << oracle::mode_name(c.mode) << " c=" << c.c
            << " n=" << c.a.size();
      }
    }
  }
  // fnuz has no -0.
  RoundingContext ctx(formats::e4m3fnuz, Rounding{rdn});
  EXPECT_FALSE(std::signbit(make_accumulation("exact")->dot(
      std::vector<double>{1.0, -1.0}, std::vector<double>{1.0, 1.0}, 0.0, ctx)));
}

TEST(Accumulation, RegistryAndErrors) {
  const auto names = accumulation_names();
  for (const char* n : {"exact", "kahan", "pairwise", "sequential"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    EXPECT_EQ(make_accumulation(n)->name(), n);
  }
  EXPECT_THROW(make_accumulation("nope"), std::invalid_argument);
  RoundingContext ctx(formats::bf16);
  EXPECT_THROW(
      make_accumulation("exact")->dot(std::vector<double>{1.0}, std::vector<double>{}, 0.0, ctx),
      std::invalid_argument);
  // sum() is dot with ones.
  const std::vector<double> t = {1.0, 0x1p-9, 0x1p-9, 0x1p-9};
  EXPECT_EQ(make_accumulation("sequential")->sum(t, 0.0, ctx), 1.0);      // each 2^-9 is lost
  EXPECT_EQ(make_accumulation("exact")->sum(t, 0.0, ctx), 1.0 + 0x1p-7);  // 1 + 0.75 ulp: up
}

}  // namespace

namespace {
// add(Unrounded) takes significands up to 120 bits (as parse_exact produces): sums of random
// such terms, rounded into fp64 in every mode, agree with MPFR's exact sum.
TEST(ExactAccumulator, WideSignificandTerms) {
  std::mt19937_64 rng(12);
  mpfr_t sum, term, got;
  mpfr_inits2(kExactPrecision, sum, term, got, static_cast<mpfr_ptr>(nullptr));
  for (int trial = 0; trial < 2000; ++trial) {
    ExactAccumulator acc;
    mpfr_set_zero(sum, 1);
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      const uint128 sig = ((uint128{rng()} << 64) | rng()) >> (8 + rng() % 60);
      const int64_t e = static_cast<int64_t>(rng() % 600) - 300;
      const bool neg = rng() & 1;
      acc.add(Unrounded::finite(neg, e, sig));
      mpfr_set_ui(term, static_cast<unsigned long>(sig >> 64), MPFR_RNDN);
      mpfr_mul_2ui(term, term, 64, MPFR_RNDN);
      mpfr_add_ui(term, term, static_cast<unsigned long>(static_cast<uint64_t>(sig)), MPFR_RNDN);
      mpfr_mul_2si(term, term, e, MPFR_RNDN);
      if (neg) mpfr_neg(term, term, MPFR_RNDN);
      ASSERT_EQ(mpfr_add(sum, sum, term, MPFR_RNDN), 0);
    }
    const Unrounded u = acc.exact_sum();
    if (mpfr_zero_p(sum)) {
      EXPECT_EQ(u.kind, Unrounded::Kind::kZero);
      continue;
    }
    // Rounded into fp64 in every mode, the accumulator's sum and MPFR's agree.
    oracle::Oracle o(formats::fp64);
    uint64_t expected[6];
    o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, sum, rnd); }, expected);
    for (int k = 0; k < 6; ++k) {
      ASSERT_EQ(round_to_format(formats::fp64, u, Rounding{oracle::kModes[k]}), expected[k])
          << trial;
    }
  }
  mpfr_clears(sum, term, got, static_cast<mpfr_ptr>(nullptr));
}
}  // namespace
