// 8-bit arithmetic against MPFR: every pair of encodings for + - x /, every deterministic mode;
// fma on every combination of special values and on 10^5 random triples (all 2^24 triples are
// in arithmetic_heavy_test); literal checks of NaN, infinity and signed-zero behaviour.
#include <gtest/gtest.h>

#include "tests/format_support.hpp"

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

const Format kEightBit[] = {formats::e4m3fn, formats::e5m2, formats::e4m3fnuz, formats::e5m2fnuz};

using simprec::testing::with;

class EightBit : public ::testing::TestWithParam<Format> {};

TEST_P(EightBit, EveryPairEveryOpEveryMode) {
  Checker c(GetParam());
  for (uint64_t a = 0; a < 256; ++a) {
    for (uint64_t b = 0; b < 256; ++b) {
      for (Op op : {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv}) c.check(op, a, b);
    }
  }
  EXPECT_EQ(c.checked, 256u * 256 * 4 * 6);
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

TEST_P(EightBit, SqrtEveryEncoding) {
  Checker c(GetParam());
  for (uint64_t a = 0; a < 256; ++a) c.check(Op::kSqrt, a);
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

// The special values of a format, by their definition.
std::vector<uint64_t> special_encodings(const oracle::Spec& s) {
  std::vector<uint64_t> v;
  const uint64_t sign = s.sign_bit;
  for (uint64_t mag : {uint64_t{0}, uint64_t{1}, s.max_bits, s.max_bits - 1,
                       uint64_t{1} << s.m /* min normal */, (uint64_t{1} << s.m) - 1}) {
    v.push_back(mag);
    if (!(s.unsigned_zero && mag == 0)) v.push_back(mag | sign);
  }
  const uint64_t one = static_cast<uint64_t>(s.bias) << s.m;
  v.push_back(one);
  v.push_back(one | sign);
  v.push_back(s.nan_bits);
  if (s.ieee) {
    v.push_back(s.inf_bits);
    v.push_back(s.inf_bits | sign);
    v.push_back(s.magnitude_all | sign);  // a NaN with the sign set and another payload
  }
  if (s.finite_nan) v.push_back(s.magnitude_all | sign);  // the negative NaN
  return v;
}

TEST_P(EightBit, FmaAllCombinationsOfSpecialValues) {
  Checker c(GetParam());
  const auto sv = special_encodings(c.o.spec());
  for (uint64_t a : sv) {
    for (uint64_t b : sv) {
      for (uint64_t x : sv) c.check(Op::kFma, a, b, x);
    }
  }
  EXPECT_GT(c.checked, 1000u);
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

TEST_P(EightBit, FmaRandomTriples) {
  Checker c(GetParam());
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t r = rng();
    c.check(Op::kFma, r & 0xff, (r >> 8) & 0xff, (r >> 16) & 0xff);
  }
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

INSTANTIATE_TEST_SUITE_P(
    Formats, EightBit,
    ::testing::Values(formats::e4m3fn, formats::e5m2, formats::e4m3fnuz, formats::e5m2fnuz,
                      // the policies as independent knobs
                      with(formats::e4m3fn, OverflowPolicy::kSaturate),
                      with(formats::e5m2, OverflowPolicy::kSaturate),
                      with(formats::e5m2, OverflowPolicy::kInfinity, SubnormalPolicy::kFlush),
                      with(formats::e4m3fnuz, OverflowPolicy::kNan, SubnormalPolicy::kFlush)),
    [](const auto& info) {
      std::string n = info.param.name();
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

// Literal expectations: the behaviour at the edges, written out by hand.
TEST(EightBitLiterals, NanInfinityAndZeroSigns) {
  using F = Format;
  auto op = [](const F& f, RoundingMode m, Op o, uint64_t a, uint64_t b) {
    RoundingContext ctx(f, Rounding{m});
    return run_op(o, ctx, a, b, 0);
  };
  const auto rne = RoundingMode::kNearestEven, rdn = RoundingMode::kDown,
             rtz = RoundingMode::kTowardZero;
  // e4m3fn: 448 = 0x7e is the largest finite, 0x7f/0xff the NaNs, no infinity.
  EXPECT_EQ(op(formats::e4m3fn, rne, Op::kAdd, 0x7e, 0x60 /*32*/), 0x7fu);  // 480: overflow, NaN
  EXPECT_EQ(op(formats::e4m3fn, rne, Op::kAdd, 0x7e, 0x58 /*16*/), 0x7eu);  // 464: tie to even 448
  EXPECT_EQ(op(formats::e4m3fn, rtz, Op::kAdd, 0x7e, 0x7e), 0x7eu);         // 896 toward zero
  EXPECT_EQ(op(with(formats::e4m3fn, OverflowPolicy::kSaturate), rne, Op::kMul, 0x7e, 0x7e), 0x7eu);
  EXPECT_EQ(op(formats::e4m3fn, rne, Op::kAdd, 0xff, 0x38), 0x7fu);  // NaN in, canonical out
  EXPECT_EQ(op(formats::e4m3fn, rne, Op::kDiv, 0x38, 0x00), 0x7fu);  // 1/0: no inf, NaN
  EXPECT_EQ(op(formats::e4m3fn, rne, Op::kSub, 0x38, 0x38), 0x00u);  // 1-1 = +0
  EXPECT_EQ(op(formats::e4m3fn, rdn, Op::kSub, 0x38, 0x38), 0x80u);  // -0 in rdn
  EXPECT_EQ(op(formats::e4m3fn, rne, Op::kAdd, 0x80, 0x80), 0x80u);  // -0 + -0 = -0
  EXPECT_EQ(op(formats::e4m3fn, rne, Op::kMul, 0x80, 0x38), 0x80u);  // -0 * 1 = -0
  // e5m2: IEEE specials.
  EXPECT_EQ(op(formats::e5m2, rne, Op::kSub, 0x7c, 0x7c), 0x7eu);  // inf - inf
  EXPECT_EQ(op(formats::e5m2, rne, Op::kMul, 0x7c, 0x00), 0x7eu);  // inf * 0
  EXPECT_EQ(op(formats::e5m2, rne, Op::kDiv, 0xbc, 0x00), 0xfcu);  // -1/+0 = -inf
  EXPECT_EQ(op(formats::e5m2, rne, Op::kMul, 0x7b, 0x40), 0x7cu);  // 57344*2 -> inf
  EXPECT_EQ(op(formats::e5m2, rtz, Op::kMul, 0x7b, 0x40), 0x7bu);  // -> max in rtz
  EXPECT_EQ(op(formats::e5m2, rdn, Op::kMul, 0x7b, 0x40), 0x7bu);  // -> max in rdn (positive)
  EXPECT_EQ(op(formats::e5m2, rdn, Op::kMul, 0xfb, 0x40), 0xfcu);  // -> -inf in rdn (negative)
  // fnuz: 0x80 is the only NaN; no -0 ever, not even in rdn or from -tiny.
  EXPECT_EQ(op(formats::e4m3fnuz, rdn, Op::kSub, 0x40, 0x40), 0x00u);
  EXPECT_EQ(op(formats::e4m3fnuz, rne, Op::kMul, 0x80, 0x01), 0x80u);  // NaN operand
  EXPECT_EQ(op(formats::e4m3fnuz, rne, Op::kMul, 0x81, 0x01), 0x00u);  // -tiny -> +0
  EXPECT_EQ(op(formats::e4m3fnuz, rdn, Op::kMul, 0x81, 0x01), 0x81u);  // rdn: -min subnormal
  EXPECT_EQ(op(formats::e4m3fnuz, rne, Op::kMul, 0x7f, 0x7f), 0x80u);  // 240*240 overflow: NaN
  EXPECT_EQ(op(formats::e5m2fnuz, rne, Op::kDiv, 0x40, 0x00), 0x80u);  // x/0: NaN
}

}  // namespace
