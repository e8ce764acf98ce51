// Stochastic rounding (sr) and random-tie rounding (rnr).
//
// 1. The definition, exactly: for a value x between its toward-zero neighbour z and its
//    away-from-zero neighbour a (both taken from the MPFR oracle), with dropped fraction
//    f = |x - z| / |a - z| and random word r, sr with k bits rounds away exactly when
//    floor(f * 2^k) + (r >> (32 - k)) >= 2^k (emulation/rounding_mode.hpp). Checked for every
//    k = 1..32 on random (x, r), so that over uniform r the up-frequency is exactly
//    floor(f * 2^k) / 2^k.
// 2. Statistics with the library's own Philox stream (fixed seeds): mean of N roundings vs the
//    input, and up-frequency vs floor(f * 2^k) / 2^k, each within 5 binomial standard
//    deviations: |mean - E| <= 5 * q * sqrt(P(1-P) / N) for the mean (q = |a - z|), and
//    |count - N P| <= 5 * sqrt(N P (1-P)) for counts (exact equality when P is 0 or 1).
//    Under independent fair random bits each check fails with probability < 6e-7.
// 3. rnr: ties go up with frequency 1/2 within the same 5 sigma bound; non-ties go to nearest.
// 4. The same output for 1, 2 and 8 threads.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "emulation/bulk.hpp"
#include "emulation/round.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;

constexpr double kSigmas = 5.0;

// Toward-zero and away-from-zero neighbours of x in f (MPFR oracle), as encodings.
struct Neighbours {
  uint64_t toward, away;
};
Neighbours neighbours(oracle::Oracle& o, double x) {
  mpfr_t v;
  mpfr_init2(v, 64);
  mpfr_set_d(v, x, MPFR_RNDN);
  uint64_t out[6];
  o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, v, rnd); }, out);
  mpfr_clear(v);
  return {out[2], std::signbit(x) ? out[4] : out[3]};
}

// Inputs for a format: random values in several binades, subnormals, below the smallest
// subnormal, and just below the largest finite value. Values are exact doubles.
std::vector<double> sr_inputs(const oracle::Spec& s, std::mt19937_64& rng, int count) {
  std::vector<double> v;
  const double q_top = std::ldexp(1.0, s.emax - s.m);
  for (int i = 0; i < count; ++i) {
    const double frac = static_cast<double>(rng() >> 11) * 0x1p-53;
    double x;
    switch (i % 5) {
      case 0:  // a subnormal interval (or below the smallest subnormal)
        x = frac * s.min_normal;
        break;
      case 1:
        x = frac * s.min_subnormal;
        break;
      case 2:  // just below the largest finite value
        x = s.max_finite - q_top * frac;
        break;
      default: {  // a random binade
        const int e = s.emin + static_cast<int>(rng() % static_cast<uint64_t>(s.emax - s.emin + 1));
        x = std::ldexp(1.0 + frac, e);
        if (std::fabs(x) > s.max_finite) x = s.max_finite * (1 - frac / 64);
      }
    }
    v.push_back((rng() & 1) ? -x : x);
  }
  return v;
}

const Format kSrFormats[] = {formats::bf16,     formats::fp16,     formats::e4m3fn, formats::e5m2,
                             formats::e4m3fnuz, formats::e5m2fnuz, formats::tf32,   formats::fp32};

TEST(Stochastic, DefinitionHoldsExactlyForEveryK) {
  std::mt19937_64 rng(31337);
  oracle::Mismatches bad;
  uint64_t checked = 0;
  for (const Format& f : kSrFormats) {
    oracle::Oracle o(f);
    const auto& s = o.spec();
    for (double x : sr_inputs(s, rng, 2000)) {
      const Neighbours n = neighbours(o, x);
      const double z = oracle::decode(s, n.toward), a = oracle::decode(s, n.away);
      const double q = std::fabs(a - z);                      // exact: neighbours in one format
      const double frac = q == 0 ? 0 : std::fabs(x - z) / q;  // exact (x - z is exact)
      for (int k = 1; k <= 32; ++k) {
        for (int j = 0; j < 4; ++j) {
          const uint32_t r = static_cast<uint32_t>(rng());
          const double t = std::floor(std::ldexp(frac, k));
          const bool up = t + static_cast<double>(r >> (32 - k)) >= std::ldexp(1.0, k);
          const uint64_t want = up ? n.away : n.toward;
          const uint64_t got = round_to_format(f, unrounded_from_double(x),
                                               Rounding{RoundingMode::kStochastic, k}, r);
          ++checked;
          if (got != want) {
            bad.add(f.name() + " x=" + oracle::hex(std::bit_cast<uint64_t>(x)) +
                    " k=" + std::to_string(k) + " r=" + oracle::hex(r) + ": expected " +
                    oracle::hex(want) + " got " + oracle::hex(got));
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000000u);
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// N roundings of x through the bulk API (element i takes random index i of the stream).
std::vector<double> sr_samples(const Format& f, double x, size_t n, int sr_bits, uint64_t seed,
                               RoundingMode mode = RoundingMode::kStochastic) {
  std::vector<double> in(n, x), out(n);
  round_to_values<double>(in, out,
                          BulkRounding{f, Rounding{mode, sr_bits}, RandomStream{seed, 1}, 0, 1});
  return out;
}

TEST(Stochastic, MeanEqualsInputWithinFiveSigma) {
  std::mt19937_64 rng(2718);
  constexpr size_t kN = 1 << 15;
  int checked = 0;
  for (const Format& f :
       {formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2, formats::e4m3fnuz}) {
    oracle::Oracle o(f);
    const auto& s = o.spec();
    for (double x0 : sr_inputs(s, rng, 40)) {
      // Keep 30 bits of fraction below the format's quantum so that P(up) = fraction exactly
      // (k = 32 >= 30) and the expected mean is x itself.
      const Neighbours n = neighbours(o, x0);
      const double z = oracle::decode(s, n.toward), a = oracle::decode(s, n.away);
      if (!std::isfinite(a)) continue;
      const double q = std::fabs(a - z);
      const double frac = std::floor(std::fabs(x0 - z) / q * 0x1p30) * 0x1p-30;
      const double x = z + std::copysign(frac * q, x0);
      const double p = frac;
      const auto samples = sr_samples(f, x, kN, 32, 1000 + checked);
      long double sum = 0;
      for (double v : samples) {
        ASSERT_TRUE(v == z || v == a) << f.name() << " x=" << x << " gave " << v;
        sum += v;
      }
      const double mean = static_cast<double>(sum / kN);
      const double bound = kSigmas * q * std::sqrt(p * (1 - p) / kN);
      EXPECT_LE(std::fabs(mean - x), bound + 1e-300)
          << f.name() << " x=" << x << " z=" << z << " a=" << a << " mean=" << mean;
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

TEST(Stochastic, UpFrequencyMatchesTruncatedProbabilityForEveryK) {
  constexpr size_t kN = 1 << 15;
  // Fractions (of the bf16 quantum at 1) with 40 significant bits, so that floor(f 2^k)/2^k
  // differs from f for every k < 40: the bound tells them apart for small k.
  const double fractions[] = {1 - 0x1p-40, 0.75 - 0x1p-40, 0x1p-3 + 0x1p-40, 0.5 + 0x1.234567p-20};
  for (double frac : fractions) {
    const double x = 1.0 + frac * 0x1p-7;  // bf16: quantum 2^-7 at 1
    for (int k = 1; k <= 32; ++k) {
      const auto samples = sr_samples(formats::bf16, x, kN, k, 77 + k);
      size_t up = 0;
      for (double v : samples) up += v > 1.0;
      const double p = std::floor(std::ldexp(frac, k)) / std::ldexp(1.0, k);
      const double bound = kSigmas * std::sqrt(kN * p * (1 - p));
      EXPECT_LE(std::fabs(static_cast<double>(up) - kN * p), bound)
          << "frac=" << frac << " k=" << k << " up=" << up << " expected " << kN * p;
    }
  }
}

TEST(Stochastic, SubnormalAndUnderflowBand) {
  // Below the smallest subnormal: 0 or min subnormal, with mean x (fp16: 2^-24; e4m3fn 2^-9).
  constexpr size_t kN = 1 << 16;
  for (const Format& f : {formats::fp16, formats::e4m3fn, formats::bf16}) {
    const double ms = oracle::spec_of(f).min_subnormal;
    for (double frac : {0.25, 0.5, 0.9375, 0x1p-10}) {
      const double x = ms * frac;
      const auto samples = sr_samples(f, x, kN, 32, 5);
      double sum = 0;
      for (double v : samples) sum += v;
      const double bound = kSigmas * ms * std::sqrt(frac * (1 - frac) / kN);
      EXPECT_LE(std::fabs(sum / kN - x), bound) << f.name() << " frac=" << frac;
    }
  }
}

TEST(Stochastic, SameOutputForOneTwoAndEightThreads) {
  const size_t n = 8 * 65536 + 333;
  std::mt19937_64 rng(4);
  std::vector<float> in(n);
  for (auto& v : in)
    v = static_cast<float>(std::ldexp(1.0 + (rng() >> 11) * 0x1p-53, int(rng() % 40) - 20));
  for (RoundingMode m : {RoundingMode::kStochastic, RoundingMode::kNearestRandomTies}) {
    std::vector<uint16_t> ref;
    for (unsigned t : {1u, 2u, 8u}) {
      std::vector<uint16_t> out(n, 0xbeef);
      round_to_bits<float, uint16_t>(in, out,
                                     BulkRounding{formats::bf16, Rounding{m, 20}, {11, 12}, 13, t});
      if (t == 1) {
        ref = out;
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(out[i], round_to_format(formats::bf16, unrounded_from_float(in[i]),
                                            Rounding{m, 20}, random_bits({11, 12}, 13 + i)))
              << i;
        }
      } else {
        EXPECT_TRUE(out == ref) << oracle::mode_name(m) << " threads=" << t;
      }
    }
  }
}

TEST(RandomTies, TiesAreFairAndNonTiesGoToNearest) {
  constexpr size_t kN = 1 << 16;
  for (const Format& f : {formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2}) {
    oracle::Oracle o(f);
    const auto& s = o.spec();
    const double q1 = std::ldexp(1.0, -s.m);  // quantum at 1
    const double ms = s.min_subnormal;
    for (double x : {1 + q1 / 2, 1 + 1.5 * q1, -(1 + q1 / 2), ms / 2, 3 * ms / 2, -ms / 2}) {
      const auto samples = sr_samples(f, x, kN, 32, 8, RoundingMode::kNearestRandomTies);
      const double lo = std::copysign(
          std::floor(std::fabs(x) / (std::fabs(x) < 1 ? ms : q1)) * (std::fabs(x) < 1 ? ms : q1),
          x);
      size_t away = 0;
      for (double v : samples) {
        ASSERT_TRUE(v == lo || std::fabs(v) > std::fabs(lo)) << f.name() << " x=" << x;
        away += v != lo;
      }
      EXPECT_LE(std::fabs(static_cast<double>(away) - kN / 2.0), kSigmas * std::sqrt(kN / 4.0))
          << f.name() << " x=" << x << " away=" << away;
    }
    // Non-ties: exactly the nearest, every time (compare with the oracle's rne).
    std::mt19937_64 rng(3);
    for (double x : sr_inputs(s, rng, 300)) {
      mpfr_t v;
      mpfr_init2(v, 64);
      mpfr_set_d(v, x, MPFR_RNDN);
      uint64_t out[6];
      o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, v, rnd); }, out);
      mpfr_clear(v);
      const double z = oracle::decode(s, out[2]);
      const double a = oracle::decode(s, std::signbit(x) ? out[4] : out[3]);
      if (2 * std::fabs(x - z) == std::fabs(a - z)) continue;  // a tie
      for (uint32_t r : {0u, 1u, 0xffffffffu, 0x12345678u}) {
        ASSERT_EQ(round_to_format(f, unrounded_from_double(x),
                                  Rounding{RoundingMode::kNearestRandomTies}, r),
                  out[0])
            << f.name() << " x=" << x;
      }
    }
  }
}

}  // namespace

#include "emulation/arithmetic.hpp"
#include "emulation/elementary.hpp"

namespace {

// sr on arithmetic results (jammed quotients and roots, long sums) and on exp/exp2/log follows
// the definition exactly: the exact result y comes from MPFR at 300 bits toward zero (its
// floor(f * 2^k) is exact, see below), the neighbours from the oracle, the random word is the
// context's next one. This needs the producers to keep >= precision + sr_bits + 2 exact bits.
struct SrDefinition {
  oracle::Oracle o;
  mpfr_t y, d;
  explicit SrDefinition(const Format& f) : o(f) {
    mpfr_init2(y, 300);
    mpfr_init2(d, 400);
  }
  ~SrDefinition() {
    mpfr_clear(y);
    mpfr_clear(d);
  }
  // Expected encoding for sr with k bits and random word r of the value eval() computes.
  template <class Eval>
  uint64_t expected(Eval&& eval, int k, uint32_t r) {
    uint64_t out[6];
    o.round_all(eval, out);
    const auto& s = o.spec();
    const uint64_t toward = out[2];
    mpfr_clear_flags();
    const int ternary = eval(y, MPFR_RNDZ);
    const bool negative = mpfr_signbit(y) != 0;
    const uint64_t away = negative ? out[4] : out[3];
    if (mpfr_inf_p(y)) return mpfr_overflow_p() ? away : toward;  // huge: always away
    if (mpfr_nan_p(y) || out[3] == out[4] || (mpfr_zero_p(y) && ternary == 0)) {
      return toward;  // exact (zero signs as in rtz: -0 only from -0 + -0), NaN or infinite
    }
    const double z = oracle::decode(s, toward);
    const double av = oracle::decode(s, away);
    // Beyond the largest finite value the next step is the quantum of the top binade.
    const double q = std::isfinite(av) ? std::fabs(av - z) : std::ldexp(1.0, s.emax - s.m);
    // t = floor((|y| - |z|) / q * 2^k): y truncated toward zero at 300 bits gives the same floor
    // (a truncation can only lose a part below 2^-280 of q, never cross an integer upward, and
    // an exact integer with a nonzero remainder below stays that integer).
    mpfr_abs(d, y, MPFR_RNDN);
    mpfr_sub_d(d, d, std::fabs(z), MPFR_RNDN);  // exact at 400 bits
    mpfr_div_d(d, d, q, MPFR_RNDN);             // exact: q is a power of two
    mpfr_mul_2ui(d, d, static_cast<unsigned long>(k), MPFR_RNDN);
    mpfr_floor(d, d);
    const double t = mpfr_get_d(d, MPFR_RNDN);
    const bool up = t + static_cast<double>(r >> (32 - k)) >= std::ldexp(1.0, k);
    return up ? away : toward;
  }
};

TEST(Stochastic, ArithmeticFollowsDefinition) {
  using oracle::Op;
  std::mt19937_64 rng(55);
  oracle::Mismatches bad;
  for (const Format& f :
       {formats::fp64, formats::fp32, formats::bf16, formats::e4m3fn, formats::e5m2}) {
    SrDefinition def(f);
    const auto& s = def.o.spec();
    oracle::Inputs in;
    for (int k : {1, 7, 32}) {
      RoundingContext ctx(f, Rounding{RoundingMode::kStochastic, k}, RandomStream{3, 4});
      for (Op op : {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kFma, Op::kSqrt}) {
        for (int i = 0; i < 3000; ++i) {
          uint64_t e[3];
          for (auto& v : e) {
            v = rng() & ((s.sign_bit << 1) - 1);
            if (oracle::is_nan(s, v)) v = 0;
            if (s.ieee && (v & s.magnitude_all) == s.inf_bits) v = 1;
          }
          if (op == Op::kSqrt) e[0] &= s.magnitude_all;
          if (i % 2)
            e[1] = (e[1] & ((uint64_t{1} << (s.m + 2)) - 1)) |
                   (e[0] & ~((uint64_t{1} << (s.m + 2)) - 1));
          in.set(oracle::decode(s, e[0]), oracle::decode(s, e[1]), oracle::decode(s, e[2]));
          const uint32_t r = random_bits(ctx.random_stream(), ctx.next_index());
          uint64_t got = 0;
          switch (op) {
            case Op::kAdd:
              got = add(ctx, e[0], e[1]);
              break;
            case Op::kSub:
              got = sub(ctx, e[0], e[1]);
              break;
            case Op::kMul:
              got = mul(ctx, e[0], e[1]);
              break;
            case Op::kDiv:
              got = div(ctx, e[0], e[1]);
              break;
            case Op::kFma:
              got = fma(ctx, e[0], e[1], e[2]);
              break;
            case Op::kSqrt:
              got = sqrt(ctx, e[0]);
              break;
          }
          const uint64_t want = def.expected(
              [&](mpfr_ptr rop, mpfr_rnd_t rnd) { return oracle::mpfr_op(op, rop, in, rnd); }, k,
              r);
          if (got != want) {
            bad.add(f.name() + " " + oracle::op_name(op) + " k=" + std::to_string(k) +
                    " a=" + oracle::hex(e[0]) + " b=" + oracle::hex(e[1]) +
                    " c=" + oracle::hex(e[2]) + " r=" + oracle::hex(r) + ": expected " +
                    oracle::hex(want) + " got " + oracle::hex(got));
          }
        }
      }
    }
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

TEST(Stochastic, ElementaryFollowsDefinitionForEveryBf16) {
  oracle::Mismatches bad;
  for (int k : {32, 4}) {
    SrDefinition def(formats::bf16);
    RoundingContext ctx(formats::bf16, Rounding{RoundingMode::kStochastic, k}, RandomStream{8, 1});
    mpfr_t x;
    mpfr_init2(x, 64);
    for (uint64_t a = 0; a < 65536; a += (k == 32 ? 1 : 7)) {
      mpfr_set_d(x, oracle::decode(def.o.spec(), a), MPFR_RNDN);
      for (int fn = 0; fn < 3; ++fn) {
        const uint32_t r = random_bits(ctx.random_stream(), ctx.next_index());
        const uint64_t got = fn == 0 ? exp(ctx, a) : fn == 1 ? exp2(ctx, a) : log(ctx, a);
        const uint64_t want = def.expected(
            [&](mpfr_ptr rop, mpfr_rnd_t rnd) {
              return fn == 0   ? mpfr_exp(rop, x, rnd)
                     : fn == 1 ? mpfr_exp2(rop, x, rnd)
                               : mpfr_log(rop, x, rnd);
            },
            k, r);
        if (got != want) {
          bad.add("bf16 fn" + std::to_string(fn) + " k=" + std::to_string(k) +
                  " a=" + oracle::hex(a) + " r=" + oracle::hex(r) + ": expected " +
                  oracle::hex(want) + " got " + oracle::hex(got));
        }
      }
    }
    mpfr_clear(x);
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

TEST(Stochastic, ContextDrawsOneIndexPerRandomRounding) {
  RoundingContext sr(formats::bf16, Rounding{RoundingMode::kStochastic}, RandomStream{1, 2}, 10);
  sr.round(1.001);
  sr.round(1.002);
  EXPECT_EQ(sr.next_index(), 12u);
  RoundingContext rne(formats::bf16, Rounding{}, RandomStream{1, 2}, 10);
  rne.round(1.001);
  EXPECT_EQ(rne.next_index(), 10u);  // deterministic modes draw nothing
  RoundingContext a(formats::bf16, Rounding{RoundingMode::kStochastic}, RandomStream{1, 2}, 10);
  EXPECT_EQ(a.round(1.001),
            round_to_format(formats::bf16, unrounded_from_double(1.001),
                            Rounding{RoundingMode::kStochastic}, random_bits({1, 2}, 10)));
}

}  // namespace
