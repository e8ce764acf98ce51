// The OCP Microscaling (MX v1.0) element formats FP6 e2m3 and e3m2, FP4 e2m1 (no infinity, no
// NaN) and the scale format E8M0 (no sign, no mantissa, no zero): their limits against the
// spec's tables, names and validation, hand-worked roundings, and arithmetic against MPFR
// exhaustively (every pair of encodings for + - x /, every encoding for sqrt, every triple
// (FP4, FP6) or random triples (E8M0) for fma, all deterministic modes), the stochastic-rounding
// rule for every k, and the bulk API against the scalar kernel. Conversions from every bf16 and
// fp16 encoding and from random doubles are in rounding_conversion_test, decoding of every
// encoding in format_test.
#include <gtest/gtest.h>

#include "tests/format_support.hpp"

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "emulation/arithmetic.hpp"
#include "emulation/bulk.hpp"
#include "emulation/round.hpp"
#include "tests/arithmetic_checker.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;
using oracle::Op;
using simprec::testing::Checker;
using simprec::testing::with;

const Format kElementFormats[] = {formats::fp4_e2m1, formats::fp6_e2m3, formats::fp6_e3m2};

// Every new format with every overflow and subnormal policy it accepts.
std::vector<Format> all_variants() {
  std::vector<Format> v;
  for (const Format& f : kElementFormats) {
    v.push_back(f);
    v.push_back(with(f, OverflowPolicy::kSaturate, SubnormalPolicy::kFlush));
  }
  v.push_back(formats::e8m0);
  v.push_back(with(formats::e8m0, OverflowPolicy::kSaturate));
  return v;
}

TEST(MxFormats, SpecNumbers) {
  // OCP MX v1.0 §5.3.2 (FP6), §5.3.3 (FP4), §5.4.1 (E8M0), typed in from the spec.
  struct Row {
    Format f;
    int width;
    double max, min_normal, min_sub;
  } rows[] = {
      {formats::fp6_e2m3, 6, 7.5, 1.0, 0.125},
      {formats::fp6_e3m2, 6, 28.0, 0.25, 0.0625},
      {formats::fp4_e2m1, 4, 6.0, 1.0, 0.5},
      {formats::e8m0, 8, 0x1p127, 0x1p-127, 0x1p-127},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.f.name());
    EXPECT_EQ(r.f.width(), r.width);
    EXPECT_EQ(r.f.max_finite(), r.max);
    EXPECT_EQ(r.f.min_normal(), r.min_normal);
    EXPECT_EQ(r.f.min_subnormal(), r.min_sub);
    EXPECT_FALSE(r.f.has_infinity());
    EXPECT_TRUE(r.f.validate().empty()) << r.f.validate();
    const auto s = oracle::spec_of(r.f);
    EXPECT_EQ(s.max_finite, r.max);
    EXPECT_EQ(s.min_subnormal, r.min_sub);
    EXPECT_EQ(r.f.max_finite_bits(), s.max_bits);
    EXPECT_EQ(r.f.emin(), s.emin);
    EXPECT_EQ(r.f.emax(), s.emax);
  }
  for (const Format& f : kElementFormats) {
    EXPECT_FALSE(f.has_nan());
    for (uint64_t b = 0; b < (uint64_t{1} << f.width()); ++b) EXPECT_FALSE(f.is_nan_bits(b));
    EXPECT_EQ(f.overflow, OverflowPolicy::kSaturate);  // the spec's clamp
  }
  EXPECT_TRUE(formats::e8m0.has_nan());
  EXPECT_FALSE(formats::e8m0.has_sign());
  EXPECT_EQ(formats::e8m0.nan_bits(), 0xffu);
  EXPECT_EQ(decode(formats::e8m0, 127), 1.0);
  EXPECT_EQ(decode(formats::e8m0, 0), 0x1p-127);
  EXPECT_EQ(decode(formats::e8m0, 254), 0x1p127);
  EXPECT_TRUE(std::isnan(decode(formats::e8m0, 255)));
  // The FP4 values listed in the spec: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
  const double fp4[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint64_t b = 0; b < 16; ++b) {
    EXPECT_EQ(decode(formats::fp4_e2m1, b), (b & 8 ? -1 : 1) * fp4[b & 7]) << b;
  }
}

TEST(MxFormats, NamesAliasesAndValidation) {
  EXPECT_EQ(parse_format("fp4_e2m1"), formats::fp4_e2m1);
  EXPECT_EQ(parse_format("float4_e2m1fn"), formats::fp4_e2m1);
  EXPECT_EQ(parse_format("fp6_e2m3"), formats::fp6_e2m3);
  EXPECT_EQ(parse_format("float6_e2m3fn"), formats::fp6_e2m3);
  EXPECT_EQ(parse_format("fp6_e3m2"), formats::fp6_e3m2);
  EXPECT_EQ(parse_format("float6_e3m2fn"), formats::fp6_e3m2);
  EXPECT_EQ(parse_format("e2m1finite"), formats::fp4_e2m1);
  EXPECT_EQ(parse_format("e3m2finite"), formats::fp6_e3m2);
  EXPECT_EQ(parse_format("e8m0"), formats::e8m0);
  EXPECT_EQ(parse_format("ue8m0"), formats::e8m0);
  EXPECT_EQ(parse_format("float8_e8m0fnu"), formats::e8m0);
  EXPECT_EQ(parse_format("e4m3finite").max_finite(), 480.0);  // 1.875 * 2^8, all finite
  EXPECT_EQ(parse_format("e4m3finite").name(), "e4m3finite");
  // "e2m1" keeps its meaning: the IEEE-style format with infinity and NaN (max 3).
  EXPECT_EQ(parse_format("e2m1").special, SpecialEncoding::kIeee);
  EXPECT_EQ(parse_format("e2m1").max_finite(), 3.0);
  EXPECT_EQ(with(formats::fp4_e2m1, OverflowPolicy::kSaturate, SubnormalPolicy::kFlush).name(),
            "fp4_e2m1:ftz");
  EXPECT_EQ(with(formats::e8m0, OverflowPolicy::kSaturate).name(), "e8m0:saturate");
  for (const char* bad : {"e2m1fin", "e8m0fn", "fp4", "e2m1finitex"}) {
    EXPECT_THROW(parse_format(bad), std::invalid_argument) << bad;
  }
  // Policies a format cannot have are refused, naming what is expected.
  for (const Format& f : kElementFormats) {
    EXPECT_NE(with(f, OverflowPolicy::kNan).validate().find("without NaN"), std::string::npos);
    EXPECT_NE(with(f, OverflowPolicy::kInfinity).validate().find("expected saturate)"),
              std::string::npos);
  }
  EXPECT_FALSE(with(formats::e8m0, OverflowPolicy::kInfinity).validate().empty());
  EXPECT_FALSE(
      with(formats::e8m0, OverflowPolicy::kNan, SubnormalPolicy::kFlush).validate().empty());
  Format e8m1 = formats::e8m0;
  e8m1.mantissa_bits = 1;
  EXPECT_FALSE(e8m1.validate().empty());
}

TEST(MxFormats, ConsumersThatNeedASignRefuseE8m0) {
  EXPECT_NO_THROW(require_sign(formats::fp4_e2m1, "attention's values"));
  try {
    require_sign(formats::e8m0, "attention's values");
    ADD_FAILURE() << "e8m0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("format e8m0 has no sign, so it cannot hold attention's"),
              std::string::npos)
        << e.what();
  }
}

TEST(MxFormats, Negate) {
  EXPECT_EQ(negate(formats::fp4_e2m1, 0x7), 0xfu);
  EXPECT_EQ(negate(formats::fp4_e2m1, 0x8), 0x0u);  // -0 -> +0
  EXPECT_EQ(negate(formats::fp6_e3m2, 0x01), 0x21u);
  EXPECT_EQ(negate(formats::e8m0, 127), 0xffu);  // -1 does not exist: NaN
  EXPECT_EQ(negate(formats::e8m0, 0xff), 0xffu);
}

TEST(MxFormats, HandWorkedCases) {
  using M = RoundingMode;
  auto r = [](const Format& f, M m, double x) {
    return round_to_format(f, unrounded_from_double(x), Rounding{m});
  };
  // FP4: 5 is the tie between 4 (0x6) and 6 (0x7); beyond 6 every mode clamps to 6.
  EXPECT_EQ(r(formats::fp4_e2m1, M::kNearestEven, 5.0), 0x6u);
  EXPECT_EQ(r(formats::fp4_e2m1, M::kNearestAway, 5.0), 0x7u);
  EXPECT_EQ(r(formats::fp4_e2m1, M::kUp, 100.0), 0x7u);
  EXPECT_EQ(r(formats::fp4_e2m1, M::kDown, -1e300), 0xfu);
  EXPECT_EQ(r(formats::fp4_e2m1, M::kNearestEven, -INFINITY), 0xfu);
  EXPECT_EQ(r(formats::fp4_e2m1, M::kNearestEven, NAN), 0x7u);   // +max, as PTX
  EXPECT_EQ(r(formats::fp4_e2m1, M::kNearestEven, 0.25), 0x0u);  // tie to even 0
  EXPECT_EQ(r(formats::fp4_e2m1, M::kNearestAway, -0.25), 0x9u);
  EXPECT_EQ(r(formats::fp6_e3m2, M::kNearestEven, 30.0), 0x1fu);
  EXPECT_EQ(r(formats::fp6_e2m3, M::kTowardZero, 7.9), 0x1fu);
  // E8M0: 1.5 is the tie between 1 and 2; at one significant bit ties go away from zero.
  EXPECT_EQ(r(formats::e8m0, M::kNearestEven, 1.5), 128u);
  EXPECT_EQ(r(formats::e8m0, M::kNearestEven, 1.4), 127u);
  EXPECT_EQ(r(formats::e8m0, M::kOdd, 1.9), 127u);  // truncation: every significand is odd
  EXPECT_EQ(r(formats::e8m0, M::kUp, 1.01), 128u);
  EXPECT_EQ(r(formats::e8m0, M::kNearestEven, 0.0), 0u);  // no zero: the smallest value
  EXPECT_EQ(r(formats::e8m0, M::kNearestEven, 0x1p-200), 0u);
  EXPECT_EQ(r(formats::e8m0, M::kNearestEven, -1.0), 0xffu);       // no sign: NaN
  EXPECT_EQ(r(formats::e8m0, M::kNearestEven, 0x1.8p127), 0xffu);  // overflow: NaN
  EXPECT_EQ(r(with(formats::e8m0, OverflowPolicy::kSaturate), M::kNearestEven, 0x1.8p127), 0xfeu);
  EXPECT_EQ(r(formats::e8m0, M::kTowardZero, 0x1.8p127), 0xfeu);
  EXPECT_EQ(r(formats::e8m0, M::kNearestEven, INFINITY), 0xffu);
}

class MxArithmetic : public ::testing::TestWithParam<Format> {};

TEST_P(MxArithmetic, EveryPairEveryOpEveryMode) {
  Checker c(GetParam());
  const uint64_t n = uint64_t{1} << GetParam().width();
  for (uint64_t a = 0; a < n; ++a) {
    for (uint64_t b = 0; b < n; ++b) {
      for (Op op : {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv}) c.check(op, a, b);
    }
  }
  EXPECT_EQ(c.checked, n * n * 4 * 6);
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

TEST_P(MxArithmetic, SqrtEveryEncoding) {
  Checker c(GetParam());
  for (uint64_t a = 0; a < (uint64_t{1} << GetParam().width()); ++a) c.check(Op::kSqrt, a);
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

TEST_P(MxArithmetic, FmaEveryTripleOrRandomTriples) {
  Checker c(GetParam());
  const uint64_t n = uint64_t{1} << GetParam().width();
  if (n <= 64) {
    for (uint64_t a = 0; a < n; ++a) {
      for (uint64_t b = 0; b < n; ++b) {
        for (uint64_t x = 0; x < n; ++x) c.check(Op::kFma, a, b, x);
      }
    }
    EXPECT_EQ(c.checked, n * n * n * 6);
  } else {
    std::mt19937_64 rng(99);
    for (int i = 0; i < 100000; ++i) c.check(Op::kFma, rng() % n, rng() % n, rng() % n);
  }
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

INSTANTIATE_TEST_SUITE_P(
    Formats, MxArithmetic,
    ::testing::Values(formats::fp4_e2m1, formats::fp6_e2m3, formats::fp6_e3m2, formats::e8m0,
                      with(formats::e8m0, OverflowPolicy::kSaturate),
                      with(formats::fp6_e3m2, OverflowPolicy::kSaturate, SubnormalPolicy::kFlush)),
    [](const auto& info) {
      std::string name = info.param.name();
      for (char& ch : name) {
        if (ch == ':') ch = '_';
      }
      return name;
    });

// Stochastic rounding, exactly as defined (emulation/rounding_mode.hpp): between its
// toward-zero neighbour z and away neighbour a (from the oracle), x rounds away exactly when
// floor(f * 2^k) + (r >> (32 - k)) >= 2^k, f = |x - z| / |a - z|; for every k and random r.
// (Flushed formats round with unbounded exponent range first, then flush: not this rule.)
TEST(MxFormats, StochasticRoundingDefinitionForEveryK) {
  std::mt19937_64 rng(4242);
  oracle::Mismatches bad;
  uint64_t checked = 0;
  for (const Format& f : all_variants()) {
    if (!f.keeps_subnormals()) continue;
    oracle::Oracle o(f);
    const auto& s = o.spec();
    for (int i = 0; i < 1500; ++i) {
      // Below, inside and at the top of the range; E8M0 takes positive values only.
      const int e = s.emin - s.m - 2 + static_cast<int>(rng() % (s.emax - s.emin + s.m + 3));
      double x = std::ldexp(1.0 + static_cast<double>(rng() >> 11) * 0x1p-53, e);
      if (std::fabs(x) > s.max_finite) x = s.max_finite * 0.999;
      if (!s.exponent_only && (rng() & 1)) x = -x;
      uint64_t n[6];
      oracle::round_double_all(o, x, n);
      const uint64_t toward = n[2], away = std::signbit(x) ? n[4] : n[3];
      const double z = oracle::decode(s, toward), a = oracle::decode(s, away);
      const double q = std::fabs(a - z);
      // z and a are neighbours of x, so x - z is exact in double (x has 53 bits, z fewer).
      const double frac = q == 0 ? 0 : std::fabs(x - z) / q;
      for (int k = 1; k <= 32; ++k) {
        const uint32_t r = static_cast<uint32_t>(rng());
        const double t = std::floor(std::ldexp(frac, k));
        const bool up = t + static_cast<double>(r >> (32 - k)) >= std::ldexp(1.0, k);
        const uint64_t got =
            round_to_format(f, unrounded_from_double(x), Rounding{RoundingMode::kStochastic, k}, r);
        ++checked;
        if (got != (up ? away : toward)) {
          bad.add(f.name() + " x=" + oracle::hex(std::bit_cast<uint64_t>(x)) +
                  " k=" + std::to_string(k) + ": expected " + oracle::hex(up ? away : toward) +
                  " got " + oracle::hex(got));
        }
      }
    }
  }
  EXPECT_EQ(checked, 5u * 1500 * 32);  // the five variants that keep subnormals
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// Random-tie rounding: at the midpoint of every pair of neighbouring values the random word's
// last bit picks the larger magnitude (1) or the smaller (0); off the midpoint it is the
// oracle's nearest-even whatever the word.
TEST(MxFormats, RandomTiesAtEveryMidpoint) {
  oracle::Mismatches bad;
  int ties = 0;
  for (const Format& f : all_variants()) {
    oracle::Oracle o(f);
    const auto& s = o.spec();
    for (uint64_t lo = 0; lo < s.max_bits; ++lo) {
      const double a = oracle::decode(s, lo), b = oracle::decode(s, lo + 1);
      for (double sign : {1.0, -1.0}) {
        if (s.exponent_only && sign < 0) continue;
        const double mid = sign * (a + b) / 2;  // exact
        uint64_t n[6];
        oracle::round_double_all(o, mid, n);
        const uint64_t toward = n[2], away = sign < 0 ? n[4] : n[3];
        ++ties;
        for (uint32_t r : {0u, 1u, 0xfffffffeu, 0x12345679u}) {
          const uint64_t got = round_to_format(f, unrounded_from_double(mid),
                                               Rounding{RoundingMode::kNearestRandomTies}, r);
          if (got != ((r & 1) ? away : toward)) {
            bad.add(f.name() + " tie " + std::to_string(mid) + " r=" + oracle::hex(r));
          }
        }
        const double off = mid + sign * (b - a) / 8;  // nearer b, not a tie
        oracle::round_double_all(o, off, n);
        for (uint32_t r : {0u, 1u}) {
          if (round_to_format(f, unrounded_from_double(off),
                              Rounding{RoundingMode::kNearestRandomTies}, r) != n[0]) {
            bad.add(f.name() + " off-tie " + std::to_string(off));
          }
        }
      }
    }
  }
  EXPECT_GT(ties, 500);
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// The bulk API (vectorised where it applies) gives the scalar kernel's bits, in every mode.
TEST(MxFormats, BulkMatchesScalarKernel) {
  std::mt19937_64 rng(7);
  std::vector<float> in(5000);
  for (auto& v : in) {
    v = static_cast<float>(std::ldexp(1.0 + (rng() >> 11) * 0x1p-53, int(rng() % 300) - 150));
    if (rng() & 1) v = -v;
  }
  in[0] = 0.0f;
  in[1] = -0.0f;
  in[2] = INFINITY;
  in[3] = -INFINITY;
  in[4] = NAN;
  oracle::Mismatches bad;
  for (const Format& f : all_variants()) {
    for (RoundingMode m : kAllRoundingModes) {
      const Rounding r{m, 12};
      const RandomStream stream{5, 6};
      std::vector<uint8_t> out(in.size());
      round_to_bits<float, uint8_t>(in, out, BulkRounding{f, r, stream, 100, 1});
      for (size_t i = 0; i < in.size(); ++i) {
        const uint32_t random = uses_random_bits(m) ? random_bits(stream, 100 + i) : 0;
        const uint64_t want = round_to_format(f, unrounded_from_float(in[i]), r, random);
        if (out[i] != want) {
          bad.add(f.name() + " " + std::string(short_name(m)) + " x=" + std::to_string(in[i]) +
                  ": bulk " + oracle::hex(out[i]) + " scalar " + oracle::hex(want));
        }
      }
    }
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

}  // namespace
