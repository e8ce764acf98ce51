// bf16 and fp16 arithmetic against MPFR: sqrt of every encoding in every deterministic mode,
// every pair drawn from a list of edge encodings (ties, the overflow threshold, the subnormal
// boundary, signed zeros, NaN, infinity) for + - x / and fma, and a random sample of pairs
// (10^5 per op; arithmetic_heavy_test runs 10^7 per op per mode).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "emulation/arithmetic.hpp"
#include "tests/arithmetic_checker.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;
using oracle::Op;
using simprec::testing::Checker;
using simprec::testing::run_op;

// Encodings at the edges of a 16-bit IEEE format, both signs.
std::vector<uint64_t> edge_encodings(const oracle::Spec& s) {
  std::set<uint64_t> mags;
  const uint64_t min_normal = uint64_t{1} << s.m, one = static_cast<uint64_t>(s.bias) << s.m;
  for (uint64_t d = 0; d < 3; ++d) {
    mags.insert(d);                                     // 0 and the smallest subnormals
    mags.insert(min_normal - 1 - d);                    // largest subnormals
    mags.insert(min_normal + d);                        // smallest normals
    mags.insert(s.max_bits - d);                        // largest finite values
    mags.insert(one + d);                               // 1 and just above
    mags.insert(one - 1 - d);                           // just below 1
    mags.insert((one >> 1) + (s.bias / 2 << s.m) + d);  // around sqrt(max)
  }
  mags.insert(s.inf_bits);
  mags.insert(s.nan_bits);
  mags.insert(s.inf_bits + 1);                    // a signalling-pattern NaN
  mags.insert(one + (uint64_t{1} << (s.m - 1)));  // 1.5
  std::vector<uint64_t> v;
  for (uint64_t m : mags) {
    v.push_back(m);
    v.push_back(m | s.sign_bit);
  }
  return v;
}

class SixteenBit : public ::testing::TestWithParam<Format> {};

TEST_P(SixteenBit, SqrtEveryEncoding) {
  Checker c(GetParam());
  for (uint64_t a = 0; a < 65536; ++a) c.check(Op::kSqrt, a);
  EXPECT_EQ(c.checked, 65536u * 6);
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

TEST_P(SixteenBit, EdgePairsAllOps) {
  Checker c(GetParam());
  const auto edges = edge_encodings(c.o.spec());
  for (uint64_t a : edges) {
    for (uint64_t b : edges) {
      for (Op op : {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv}) c.check(op, a, b);
    }
  }
  // fma over a smaller set of edges (cubic).
  std::vector<uint64_t> few;
  for (size_t i = 0; i < edges.size(); i += 3) few.push_back(edges[i]);
  for (uint64_t a : few) {
    for (uint64_t b : few) {
      for (uint64_t x : few) c.check(Op::kFma, a, b, x);
    }
  }
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

// Ties constructed on purpose: a + b exactly halfway between two neighbours, both parities,
// in the normal range, at the overflow threshold and at the subnormal boundary.
TEST_P(SixteenBit, ConstructedTies) {
  Checker c(GetParam());
  const auto& s = c.o.spec();
  const uint64_t min_normal = uint64_t{1} << s.m, one = static_cast<uint64_t>(s.bias) << s.m;
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  for (uint64_t k = 0; k < 4; ++k) {
    // x + half an ulp of x: the half ulp of 1+k ulps is 2^-(m+1), an encoding of its own.
    const uint64_t half_ulp_of_one = static_cast<uint64_t>(s.bias - s.m - 1) << s.m;
    pairs.push_back({one + k, half_ulp_of_one});
    // The overflow threshold: max + half ulp(max) (a tie that IEEE rounds to infinity).
    const uint64_t half_ulp_of_max = static_cast<uint64_t>(s.emax - s.m - 1 + s.bias) << s.m;
    pairs.push_back({s.max_bits - k, half_ulp_of_max});
    pairs.push_back({s.max_bits - k, half_ulp_of_max + 1});  // just above the tie
    // The subnormal boundary: min normal - min subnormal, halves of it by multiplication.
    pairs.push_back({min_normal + k, min_normal - 1 - k});
  }
  const uint64_t half = (static_cast<uint64_t>(s.bias - 1)) << s.m;  // 0.5
  for (auto [a, b] : pairs) {
    for (uint64_t sa : {uint64_t{0}, s.sign_bit}) {
      for (uint64_t sb : {uint64_t{0}, s.sign_bit}) {
        for (Op op : {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv}) c.check(op, a | sa, b | sb);
      }
    }
  }
  // Halving every subnormal and the smallest normals: exact ties at the subnormal quantum.
  for (uint64_t a = 0; a < 2 * min_normal; ++a) c.check(Op::kMul, a, half);
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

TEST_P(SixteenBit, RandomPairs) {
  Checker c(GetParam());
  std::mt19937_64 rng(0x5eed16);
  for (Op op : {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kFma}) {
    for (int i = 0; i < 100000; ++i) {
      const uint64_t r = rng();
      uint64_t a = r & 0xffff, b = (r >> 16) & 0xffff, x = (r >> 32) & 0xffff;
      if (i & 1) b = (b & 0x80ff) | (a & 0x7f00);  // every other pair: close exponents
      c.check(op, a, b, x);
    }
  }
  EXPECT_EQ(c.bad.count, 0u) << c.bad.report();
}

INSTANTIATE_TEST_SUITE_P(Formats, SixteenBit, ::testing::Values(formats::bf16, formats::fp16),
                         [](const auto& info) { return info.param.name(); });

TEST(SixteenBitLiterals, EdgesByHand) {
  RoundingContext fp16(formats::fp16), fp16_rdn(formats::fp16, Rounding{RoundingMode::kDown});
  EXPECT_EQ(add(fp16, 0x7bff, 0x4c00 /*16*/), 0x7c00u);  // 65504 + 16 = 65520: tie -> inf
  EXPECT_EQ(add(fp16, 0x7bff, 0x4bfe), 0x7bffu);         // 65504 + 15.98: max
  EXPECT_EQ(sub(fp16, 0x3c00, 0x3c00), 0x0000u);
  EXPECT_EQ(sub(fp16_rdn, 0x3c00, 0x3c00), 0x8000u);
  EXPECT_EQ(add(fp16, 0x8000, 0x8000), 0x8000u);
  EXPECT_EQ(add(fp16, 0x8000, 0x0000), 0x0000u);
  EXPECT_EQ(sqrt(fp16, 0x8000), 0x8000u);                 // sqrt(-0) = -0
  EXPECT_EQ(sqrt(fp16, 0xbc00), 0x7e00u);                 // sqrt(-1) = NaN
  EXPECT_EQ(mul(fp16, 0x0001, 0x3800 /*0.5*/), 0x0000u);  // min subnormal / 2: tie to 0
  EXPECT_EQ(mul(fp16, 0x0003, 0x3800), 0x0002u);          // 1.5 quanta: tie to even 2
  EXPECT_EQ(add(fp16, 0x7e00, 0x3c00), 0x7e00u);          // NaN propagates as the canonical NaN
  EXPECT_EQ(add(fp16, 0xfd01, 0x3c00), 0x7e00u);
  RoundingContext bf16(formats::bf16);
  EXPECT_EQ(add(bf16, 0x3f80, 0x3b80 /*2^-8*/), 0x3f80u);  // 1 + half ulp: tie to even
  EXPECT_EQ(add(bf16, 0x3f81, 0x3b80), 0x3f82u);           // odd + half ulp: up
  EXPECT_EQ(div(bf16, 0x3f80, 0x0000), 0x7f80u);           // 1/0 = inf
  EXPECT_EQ(div(bf16, 0x0000, 0x0000), 0x7fc0u);           // 0/0 = NaN
}

}  // namespace
