// exp, exp2 and log (emulation/elementary.hpp claims correct rounding in every mode):
// exhaustive over every bf16 and fp16 input against mpfr_exp / mpfr_exp2 / mpfr_log, every
// deterministic mode, plus double inputs at the edges for the narrow formats.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "emulation/elementary.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;

enum class Fn { kExp, kExp2, kLog };
const char* fn_name(Fn f) {
  return f == Fn::kExp ? "exp" : f == Fn::kExp2 ? "exp2" : "log";
}
int mpfr_fn(Fn f, mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) {
  switch (f) {
    case Fn::kExp:
      return mpfr_exp(r, x, rnd);
    case Fn::kExp2:
      return mpfr_exp2(r, x, rnd);
    case Fn::kLog:
      return mpfr_log(r, x, rnd);
  }
  return 0;
}
uint64_t lib_fn(Fn f, RoundingContext& ctx, uint64_t a) {
  switch (f) {
    case Fn::kExp:
      return simprec::exp(ctx, a);
    case Fn::kExp2:
      return simprec::exp2(ctx, a);
    case Fn::kLog:
      return simprec::log(ctx, a);
  }
  return 0;
}
uint64_t lib_fn_of(Fn f, RoundingContext& ctx, double x) {
  switch (f) {
    case Fn::kExp:
      return exp_of(ctx, x);
    case Fn::kExp2:
      return exp2_of(ctx, x);
    case Fn::kLog:
      return log_of(ctx, x);
  }
  return 0;
}

struct Param {
  Format format;
  Fn fn;
};

class Elementary : public ::testing::TestWithParam<Param> {};

TEST_P(Elementary, EveryEncodingEveryMode) {
  const auto [format, fn] = GetParam();
  oracle::Oracle o(format);
  const auto& s = o.spec();
  std::vector<RoundingContext> ctx;
  for (RoundingMode m : oracle::kModes) ctx.emplace_back(format, Rounding{m});
  mpfr_t x;
  mpfr_init2(x, 64);
  oracle::Mismatches bad;
  const uint64_t count = uint64_t{1} << s.width;
  for (uint64_t a = 0; a < count; ++a) {
    mpfr_set_d(x, oracle::decode(s, a), MPFR_RNDN);
    uint64_t expected[6];
    // fn by copy: clang 14 cannot capture a structured binding.
    o.round_all([&, fn = fn](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_fn(fn, r, x, rnd); },
                expected);
    for (int i = 0; i < 6; ++i) {
      const uint64_t got = lib_fn(fn, ctx[i], a);
      if (got != expected[i]) {
        bad.add(format.name() + " " + fn_name(fn) + " " + oracle::mode_name(oracle::kModes[i]) +
                " a=" + oracle::hex(a) + ": expected " + oracle::hex(expected[i]) + " got " +
                oracle::hex(got));
      }
    }
  }
  mpfr_clear(x);
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

INSTANTIATE_TEST_SUITE_P(
    All, Elementary,
    ::testing::Values(Param{formats::bf16, Fn::kExp}, Param{formats::bf16, Fn::kExp2},
                      Param{formats::bf16, Fn::kLog}, Param{formats::fp16, Fn::kExp},
                      Param{formats::fp16, Fn::kExp2}, Param{formats::fp16, Fn::kLog},
                      Param{formats::e4m3fn, Fn::kExp}, Param{formats::e5m2, Fn::kExp2},
                      Param{formats::e4m3fnuz, Fn::kLog}),
    [](const auto& info) { return info.param.format.name() + "_" + fn_name(info.param.fn); });

// Double inputs (the *_of entry points) into the 8- and 16-bit formats: random doubles around
// where the results cross the formats' overflow and underflow thresholds, and exact cases.
TEST(ElementaryOfDouble, RandomAndExactCases) {
  std::mt19937_64 rng(99);
  oracle::Mismatches bad;
  mpfr_t x;
  mpfr_init2(x, 64);
  for (const Format& f : {formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2fnuz}) {
    oracle::Oracle o(f);
    std::vector<RoundingContext> ctx;
    for (RoundingMode m : oracle::kModes) ctx.emplace_back(f, Rounding{m});
    std::vector<double> inputs = {0.0, -0.0, 1.0, 2.0, 0.5, -1.0, INFINITY, -INFINITY, NAN};
    for (int k = -160; k <= 140; ++k) inputs.push_back(k);  // exp2 exact, incl. 2^-134 ties
    for (int i = 0; i < 3000; ++i) {
      inputs.push_back((static_cast<double>(rng() >> 11) * 0x1p-53 - 0.5) * 240);
      inputs.push_back(std::ldexp(static_cast<double>(rng() >> 11) * 0x1p-53, -int(rng() % 200)));
    }
    for (double v : inputs) {
      mpfr_set_d(x, v, MPFR_RNDN);
      for (Fn fn : {Fn::kExp, Fn::kExp2, Fn::kLog}) {
        uint64_t expected[6];
        // fn by copy: clang 14 cannot capture a structured binding.
        o.round_all([&, fn = fn](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_fn(fn, r, x, rnd); },
                    expected);
        for (int i = 0; i < 6; ++i) {
          const uint64_t got = lib_fn_of(fn, ctx[i], v);
          if (got != expected[i]) {
            bad.add(f.name() + " " + fn_name(fn) + " " + oracle::mode_name(oracle::kModes[i]) +
                    " x=" + std::to_string(v) + ": expected " + oracle::hex(expected[i]) + " got " +
                    oracle::hex(got));
          }
        }
      }
    }
  }
  mpfr_clear(x);
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// scalar(x) and batch(x) (of a function f, correctly rounded to fp32 nearest-even) against
// the oracle's f(x): bits must agree (NaN: any NaN).
void expect_fp32_function_agrees_with_mpfr(const std::vector<float>& x, float (*scalar)(float),
                                           void (*batch)(const float*, float*, size_t),
                                           int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t)) {
  oracle::Oracle o(formats::fp32);
  std::vector<float> y(x.size());
  batch(x.data(), y.data(), x.size());
  mpfr_t mx;
  mpfr_init2(mx, 64);
  oracle::Mismatches bad;
  for (size_t i = 0; i < x.size(); ++i) {
    mpfr_set_d(mx, x[i], MPFR_RNDN);
    const uint64_t expected = o.round(RoundingMode::kNearestEven,
                                      [&](mpfr_ptr r, mpfr_rnd_t rnd) { return f(r, mx, rnd); });
    for (const float got : {scalar(x[i]), y[i]}) {
      const uint32_t bits = std::bit_cast<uint32_t>(got);
      if (bits != expected && !(std::isnan(got) && oracle::is_nan(o.spec(), expected))) {
        bad.add("x=" + oracle::hex(std::bit_cast<uint32_t>(x[i])) + ": expected " +
                oracle::hex(expected) + " got " + oracle::hex(bits));
      }
    }
  }
  mpfr_clear(mx);
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// exp_fp32, scalar and batch, against the oracle's fp32 nearest-even exp: random float bit
// patterns, random arguments over the range where the result is neither 0 nor inf (subnormal
// results included), and the edges. Bits must agree (NaN: any NaN).
TEST(ExpFp32, AgreesWithMpfrOnRandomArgumentsAndEdges) {
  std::mt19937_64 rng(123);
  std::vector<float> x = {0.0f,       -0.0f,       1.0f,      -1.0f,      0x1p-149f,
                          -0x1p-149f, 88.72283f,   88.72284f, -87.33654f, -87.33655f,
                          -103.9720f, -103.97208f, 89.0f,     -104.0f,    INFINITY,
                          -INFINITY,  NAN,         0x1p-25f,  -0x1p-25f,  0x1.fffffep127f};
  for (int i = 0; i < 1 << 15; ++i) {
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
    x.push_back(static_cast<float>(static_cast<double>(rng() >> 11) * 0x1p-53 * 193.0 - 104.0));
  }
  expect_fp32_function_agrees_with_mpfr(x, exp_fp32, exp_fp32, mpfr_exp);
}

// Every float in (-2, -1] (2^23 arguments, about 30 of which fall back from the batch form's
// double exp to exp_fp32) through the batch form, in place, against exp_of.
TEST(ExpFp32, BatchInPlaceAgreesWithExpOfOnABinade) {
  std::vector<float> x(size_t{1} << 23), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(-1.0f) + static_cast<uint32_t>(i));
  }
  y = x;
  exp_fp32(y.data(), y.data(), y.size());
  RoundingContext ctx(formats::fp32, Rounding{});
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    bad += static_cast<uint32_t>(exp_of(ctx, x[i])) != std::bit_cast<uint32_t>(y[i]);
  }
  EXPECT_EQ(bad, 0u);
}

// exp2_fp32, scalar and batch, against the oracle's fp32 nearest-even exp2: random float bit
// patterns, random arguments over the range where the result is neither 0 nor inf (subnormal
// results included), and the edges (-150: 2^-150 ties to the even 0).
TEST(Exp2Fp32, AgreesWithMpfrOnRandomArgumentsAndEdges) {
  std::mt19937_64 rng(321);
  std::vector<float> x = {0.0f,           -0.0f,          1.0f,        -1.0f,           0x1p-149f,
                          -0x1p-149f,     127.0f,         127.99999f,  128.0f,          -126.0f,
                          -126.0001f,     -149.0f,        -149.99998f, -150.0f,         -150.00002f,
                          INFINITY,       -INFINITY,      NAN,         0x1p-25f,        -0x1p-25f,
                          0.5f,           -0.5f,          0x1.8p-5f,   0x1.fffffep127f, -3.1415927f,
                          0x1.853a6ep-9f, -0x1.e7526ep-6f};
  for (int i = 0; i < 1 << 15; ++i) {
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
    x.push_back(static_cast<float>(static_cast<double>(rng() >> 11) * 0x1p-53 * 280.0 - 151.0));
  }
  expect_fp32_function_agrees_with_mpfr(x, exp2_fp32, exp2_fp32, mpfr_exp2);
}

// Every float in (-2, -1] through the batch form, in place, against exp2_of.
TEST(Exp2Fp32, BatchInPlaceAgreesWithExp2OfOnABinade) {
  std::vector<float> x(size_t{1} << 23), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(-1.0f) + static_cast<uint32_t>(i));
  }
  y = x;
  exp2_fp32(y.data(), y.data(), y.size());
  RoundingContext ctx(formats::fp32, Rounding{});
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    bad += static_cast<uint32_t>(exp2_of(ctx, x[i])) != std::bit_cast<uint32_t>(y[i]);
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
