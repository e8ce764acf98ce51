// fp32, tf32, fp64 and odd eXmY formats (e3m2, e6m9, e11m52 = fp64, e8m0-like extremes)
// against MPFR on random samples, and fp64 / fp32 in RNE against the machine's own IEEE
// arithmetic (a second, fully independent oracle).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "emulation/arithmetic.hpp"
#include "tests/arithmetic_checker.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;
using oracle::Op;
using simprec::testing::Checker;
using simprec::testing::run_op;

// A random encoding of a format of up to 64 bits; every fourth is near `near` (close exponent)
// so that additions cancel and round at interesting places.
uint64_t random_encoding(std::mt19937_64& rng, const oracle::Spec& s, uint64_t near, int i) {
  uint64_t r = rng();
  if (s.width < 64) r &= (uint64_t{1} << s.width) - 1;
  if (i % 4 == 3) {
    const uint64_t low = (uint64_t{1} << (s.m + 2)) - 1;
    r = (near & ~low & s.magnitude_all) | (r & low) | (r & s.sign_bit);
  }
  return r;
}

void check_random(const Format& f, int samples, uint64_t seed) {
  oracle::Oracle o(f);
  const auto& s = o.spec();
  oracle::Inputs in;
  std::vector<RoundingContext> ctx;
  for (RoundingMode m : oracle::kModes) ctx.emplace_back(f, Rounding{m});
  std::mt19937_64 rng(seed);
  oracle::Mismatches bad;
  for (Op op : {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kFma, Op::kSqrt}) {
    for (int i = 0; i < samples; ++i) {
      const uint64_t a = random_encoding(rng, s, 0, 0);
      const uint64_t b = random_encoding(rng, s, a, i);
      const uint64_t c = random_encoding(rng, s, a, i);
      in.set(oracle::decode(s, a), oracle::decode(s, b), oracle::decode(s, c));
      uint64_t expected[6];
      o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return oracle::mpfr_op(op, r, in, rnd); },
                  expected);
      for (int k = 0; k < 6; ++k) {
        const uint64_t got = run_op(op, ctx[k], a, b, c);
        if (got != expected[k]) {
          bad.add(f.name() + " " + oracle::op_name(op) + " " +
                  oracle::mode_name(oracle::kModes[k]) + " a=" + oracle::hex(a) +
                  " b=" + oracle::hex(b) + " c=" + oracle::hex(c) + ": expected " +
                  oracle::hex(expected[k]) + " got " + oracle::hex(got));
        }
      }
    }
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

TEST(WideFormats, Fp32AgainstMpfr) {
  check_random(formats::fp32, 20000, 1);
}
TEST(WideFormats, Tf32AgainstMpfr) {
  check_random(formats::tf32, 20000, 2);
}
TEST(WideFormats, Fp64AgainstMpfr) {
  check_random(formats::fp64, 20000, 3);
}
TEST(WideFormats, E3m2AgainstMpfr) {
  check_random(parse_format("e3m2"), 20000, 4);
}
TEST(WideFormats, E6m9AgainstMpfr) {
  check_random(parse_format("e6m9"), 20000, 5);
}
TEST(WideFormats, E11m52IsFp64) {
  EXPECT_EQ(parse_format("e11m52"), formats::fp64);
  check_random(parse_format("e11m52"), 5000, 6);
}
TEST(WideFormats, E2m1AndE8m1AgainstMpfr) {  // the narrowest exponent and mantissa fields
  check_random(parse_format("e2m1"), 5000, 7);
  check_random(parse_format("e8m1"), 5000, 8);
  check_random(parse_format("e5m2fnuz"), 5000, 9);
  check_random(parse_format("e3m4fn"), 5000, 10);
}
TEST(WideFormats, FlushedAndSaturatingFp32AgainstMpfr) {
  Format ftz = formats::fp32;
  ftz.subnormals = SubnormalPolicy::kFlush;
  check_random(ftz, 5000, 11);
  Format sat = formats::bf16;
  sat.overflow = OverflowPolicy::kSaturate;
  check_random(sat, 5000, 12);
}

// The machine's IEEE double and float arithmetic in round-to-nearest-even (the build uses
// -ffp-contract=off and no fast-math, so each operation below is one IEEE operation).
template <class T, class U>
void check_native(const Format& f, int samples, uint64_t seed) {
  RoundingContext ctx(f);
  std::mt19937_64 rng(seed);
  oracle::Mismatches bad;
  auto same = [](T x, U bits) {
    const T y = std::bit_cast<T>(bits);
    return (std::isnan(x) && std::isnan(y)) || std::bit_cast<U>(x) == bits;
  };
  const oracle::Spec s = oracle::spec_of(f);
  for (int i = 0; i < samples; ++i) {
    const U a = static_cast<U>(random_encoding(rng, s, 0, 0));
    const U b = static_cast<U>(random_encoding(rng, s, a, i));
    const U c = static_cast<U>(random_encoding(rng, s, a, i));
    const T x = std::bit_cast<T>(a), y = std::bit_cast<T>(b), z = std::bit_cast<T>(c);
    struct Case {
      const char* name;
      T native;
      uint64_t emulated;
    } cases[] = {
        {"add", x + y, add(ctx, a, b)},
        {"sub", x - y, sub(ctx, a, b)},
        {"mul", x * y, mul(ctx, a, b)},
        {"div", x / y, div(ctx, a, b)},
        {"fma", std::fma(x, y, z), fma(ctx, a, b, c)},
        {"sqrt", std::sqrt(x), sqrt(ctx, a)},
    };
    for (const auto& cs : cases) {
      if (!same(cs.native, static_cast<U>(cs.emulated))) {
        bad.add(std::string(cs.name) + " a=" + oracle::hex(a) + " b=" + oracle::hex(b) +
                " c=" + oracle::hex(c) + ": native " + oracle::hex(std::bit_cast<U>(cs.native)) +
                " emulated " + oracle::hex(cs.emulated));
      }
    }
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

TEST(WideFormats, Fp64MatchesNativeDouble) {
  check_native<double, uint64_t>(formats::fp64, 300000, 21);
}
TEST(WideFormats, Fp32MatchesNativeFloat) {
  check_native<float, uint32_t>(formats::fp32, 300000, 22);
}

}  // namespace
