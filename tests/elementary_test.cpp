// exp, exp2 and log (emulation/elementary.hpp claims correct rounding in every mode):
// exhaustive over every bf16 and fp16 input against mpfr_exp / mpfr_exp2 / mpfr_log, every
// deterministic mode, plus double inputs at the edges for the narrow formats.
#include <gtest/gtest.h>

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
    o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_fn(fn, r, x, rnd); }, expected);
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
        o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_fn(fn, r, x, rnd); }, expected);
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

}  // namespace
