// The GEMM engine (lib/gemm/gemm_engine.hpp) against values worked out by hand or by exact
// integer sums: split-K and promotion add their partial sums in fp32 from +0 in K order, the
// scales come in their order, the bias before the cast, and every element of K is used once.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulation/round.hpp"
#include "lib/gemm/gemm_engine.hpp"

namespace simprec::gemm {
namespace {

uint16_t bf16(float x) {
  const auto u = std::bit_cast<uint32_t>(x);
  EXPECT_EQ(u & 0xffffu, 0u) << x << " is not a bf16 value";
  return static_cast<uint16_t>(u >> 16);
}

// One output: row (a_0 .. a_{K-1}) times a column of ones.
std::vector<float> dot_with_ones(const std::string& spec, const std::vector<float>& a,
                                 const std::vector<float>& scale_a = {},
                                 const std::vector<float>& scale_b = {},
                                 const std::vector<float>& bias = {}) {
  const GemmNumerics g = parse_gemm_numerics(spec);
  std::vector<uint16_t> ab, bb;
  for (const float x : a) {
    ab.push_back(bf16(x));
    bb.push_back(bf16(1.0f));
  }
  GemmOperands o;
  o.m = 1;
  o.n = 1;
  o.k = static_cast<int>(a.size());
  o.a = ab;
  o.b = bb;
  o.scale_a = scale_a;
  o.scale_b = scale_b;
  o.bias = bias;
  return run_gemm(g, o, 1);
}

// 2^24 and two 1s in one instruction's block: exact, the sum is 2^24 + 2 (an fp32 value, and
// what one chain gives: the block adds its terms exactly). In pieces of 4 elements added in fp32
// it is 2^24 (2^24 + 1 ties to even, twice); a piece holding 2^24 and one 1 truncates it to 2^24
// (24 significant bits, toward zero).
TEST(GemmEngine, SplitKAndPromotionAddTheirPiecesInFp32) {
  std::vector<float> a(12, 0.0f);
  a[0] = 0x1p24f;
  a[5] = 1.0f;
  a[10] = 1.0f;
  EXPECT_EQ(dot_with_ones("chain", a)[0], 0x1p24f + 2.0f);
  EXPECT_EQ(dot_with_ones("chain,split_k=length:4", a)[0], 0x1p24f);
  EXPECT_EQ(dot_with_ones("chain,split_k=pieces:3", a)[0], 0x1p24f);
  EXPECT_EQ(dot_with_ones("chain,promote=4", a)[0], 0x1p24f);
  EXPECT_EQ(dot_with_ones("chain,split_k=length:8", a)[0], 0x1p24f);
  // A piece no longer than the promotion interval runs one chain.
  EXPECT_EQ(dot_with_ones("chain,split_k=length:6,promote=8", a)[0], 0x1p24f);
  EXPECT_EQ(dot_with_ones("chain,promote=12", a)[0], 0x1p24f + 2.0f);
}

// Small integers: every step is exact, so any split or promotion gives the exact sum (an integer
// sum in int64), each element of K counted once whatever the pieces.
TEST(GemmEngine, EveryElementOfKCountsOnce) {
  std::mt19937 rng(7);
  const int m = 3, n = 5, k = 1000;
  std::vector<uint16_t> a(m * k), b(k * n);
  std::vector<int> ai(m * k), bi(k * n);
  for (int i = 0; i < m * k; ++i) {
    ai[i] = static_cast<int>(rng() % 17) - 8;
    a[i] = bf16(static_cast<float>(ai[i]));
  }
  for (int i = 0; i < k * n; ++i) {
    bi[i] = static_cast<int>(rng() % 17) - 8;
    b[i] = bf16(static_cast<float>(bi[i]));
  }
  for (const char* spec :
       {"chain", "chain,split_k=pieces:7", "chain,split_k=length:100,promote=48",
        "cublas-bf16-splitk,out=fp32", "chain,promote=16", "chain,split_k=pieces:1000"}) {
    GemmOperands o;
    o.m = m;
    o.n = n;
    o.k = k;
    o.a = a;
    o.b = b;
    const std::vector<float> d = run_gemm(parse_gemm_numerics(spec), o, 2);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        int64_t exact = 0;
        for (int kk = 0; kk < k; ++kk) exact += int64_t{ai[i * k + kk]} * bi[kk * n + j];
        EXPECT_EQ(d[i * n + j], static_cast<float>(exact)) << spec << " " << i << "," << j;
      }
  }
}

// The epilogue's roundings, each worked out in double (a product of two floats is exact there,
// so one cast to float is one rounding).
TEST(GemmEngine, ScalesInTheirOrderThenBiasThenCast) {
  const float sa = 1.3f, sb = 0.7f, x = 3.0f;
  const float alpha = static_cast<float>(double{sa} * sb);
  const float want_alpha = static_cast<float>(double{x} * alpha);
  const float want_b_then_a = static_cast<float>(double{static_cast<float>(double{x} * sb)} * sa);
  ASSERT_NE(want_alpha, want_b_then_a);  // the order shows
  EXPECT_EQ(dot_with_ones("chain,scaling=tensor", {1.0f, 2.0f}, {sa}, {sb})[0], want_alpha);
  EXPECT_EQ(dot_with_ones("chain,scaling=row,scale_order=b-then-a", {1.0f, 2.0f}, {sa}, {sb})[0],
            want_b_then_a);
  // 1 + 2^-8 is a tie in bf16 (to 1); with the bias 2^-9 added first it rounds up to 1 + 2^-7.
  EXPECT_EQ(dot_with_ones("chain,out=bf16", {1.0f, 0x1p-8f})[0], 1.0f);
  EXPECT_EQ(dot_with_ones("chain,out=bf16", {1.0f, 0x1p-8f}, {}, {}, {0x1p-9f})[0], 1.0f + 0x1p-7f);
  EXPECT_EQ(dot_with_ones("chain,out=fp16", {2048.0f, 1.0f})[0], 2048.0f);  // 2049: tie to even
}

TEST(GemmEngine, OperandsThatDoNotFitAreNamed) {
  const auto message = [](const std::string& spec, const std::vector<float>& sa,
                          const std::vector<float>& bias) {
    try {
      (void)dot_with_ones(spec, {1.0f}, sa, {}, bias);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("chain", {2.0f}, {}).find("scale_a given, but the numerics have scaling=none"),
            std::string::npos);
  EXPECT_NE(message("chain,scaling=tensor", {2.0f, 3.0f}, {})
                .find("scale_a: 2 values; expected 1 (tensor-wise)"),
            std::string::npos)
      << message("chain,scaling=tensor", {2.0f, 3.0f}, {});
  EXPECT_NE(message("chain,scaling=row", {2.0f, 3.0f}, {})
                .find("scale_a: 2 values; expected 1 (tensor-wise) or 1 (one per row)"),
            std::string::npos);
  EXPECT_NE(message("chain", {}, {1.0f, 2.0f}).find("bias: 2 values; expected 1"),
            std::string::npos);
}

// Block scales against exact sums: elements and scales drawn so that every partial sum is a
// multiple of 2^-10 below 2^20, which double holds exactly (the oracle) and fp32 too, so the
// engine's block chains, scale products and fp32 additions must all be exact. A scale applied to
// the wrong block, row or column, or a block cut in the wrong place, changes the sum.
TEST(GemmEngine, BlockScalesMatchExactSums) {
  struct Case {
    const char* spec;
    Format element;
    std::vector<double> element_values, scale_values;
    std::vector<float> tensor_scales;  // scale_a, scale_b; empty: none
  };
  const Case cases[] = {
      {"mxfp8-e4m3,out=fp32",
       formats::e4m3fn,
       {-8, -6, -3, -1, 0, 1, 2, 3, 5, 7, 8},
       {0.25, 0.5, 1, 2, 4},
       {}},
      {"nvfp4,out=fp32",
       formats::fp4_e2m1,
       {-6, -3, -1.5, -0.5, 0, 0.5, 1, 2, 4, 6},
       {0.5, 0.75, 1, 1.5, 2, 3},
       {2.0f, 0.25f}},
  };
  std::mt19937 rng(11);
  for (const Case& c : cases) {
    const GemmNumerics g = parse_gemm_numerics(c.spec);
    const int block = block_length(g.block_scales);
    const int m = 3, n = 4, k = 3 * block + 5;  // a last, partial block
    const int blocks = (k + block - 1) / block;
    std::vector<double> a(m * k), b(k * n), sa(m * blocks), sb(blocks * n);
    const auto pick = [&](const std::vector<double>& from) { return from[rng() % from.size()]; };
    for (auto& x : a) x = pick(c.element_values);
    for (auto& x : b) x = pick(c.element_values);
    for (auto& x : sa) x = pick(c.scale_values);
    for (auto& x : sb) x = pick(c.scale_values);
    std::vector<uint16_t> ab(a.size()), bb(b.size());
    RoundingContext ctx(c.element);
    for (size_t i = 0; i < a.size(); ++i) ab[i] = static_cast<uint16_t>(ctx.round(a[i]));
    for (size_t i = 0; i < b.size(); ++i) bb[i] = static_cast<uint16_t>(ctx.round(b[i]));
    const std::vector<float> sa32(sa.begin(), sa.end()), sb32(sb.begin(), sb.end());
    GemmOperands o;
    o.m = m;
    o.n = n;
    o.k = k;
    o.a = ab;
    o.b = bb;
    o.block_scale_a = sa32;
    o.block_scale_b = sb32;
    std::vector<float> ta, tb;
    if (!c.tensor_scales.empty()) {
      ta = {c.tensor_scales[0]};
      tb = {c.tensor_scales[1]};
      o.scale_a = ta;
      o.scale_b = tb;
    }
    const std::vector<float> d = run_gemm(g, o, 1);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double exact = 0;
        for (int kk = 0; kk < k; ++kk)
          exact += a[i * k + kk] * b[kk * n + j] * sa[i * blocks + kk / block] *
                   sb[(kk / block) * n + j];
        if (!c.tensor_scales.empty()) exact *= double{c.tensor_scales[0]} * c.tensor_scales[1];
        EXPECT_EQ(d[i * n + j], static_cast<float>(exact)) << c.spec << " " << i << "," << j;
        EXPECT_EQ(static_cast<double>(static_cast<float>(exact)), exact);  // the claim holds
      }
  }
}

TEST(GemmEngine, BlockScalesThatDoNotFitAreNamed) {
  const auto message = [](const std::string& spec, std::vector<float> sa, int k) {
    GemmOperands o;
    std::vector<uint16_t> a(k, 0x38), b(k, 0x38);  // e4m3 1.0
    std::vector<float> sb(sa.size(), 1.0f);
    o.m = 1;
    o.n = 1;
    o.k = k;
    o.a = a;
    o.b = b;
    o.block_scale_a = sa;
    o.block_scale_b = sb;
    try {
      (void)run_gemm(parse_gemm_numerics(spec), o, 1);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("mxfp8-e4m3", {3.0f}, 32)
                .find("block_scale_a[0] = 3.000000 is not a "
                      "positive e8m0 value"),
            std::string::npos)
      << message("mxfp8-e4m3", {3.0f}, 32);
  EXPECT_NE(message("mxfp8-e4m3", {1.0f}, 64).find("block_scale_a: 1 values; expected 1 x 2"),
            std::string::npos);
  EXPECT_NE(message("mxfp8-e4m3,split_k=length:48", {1.0f, 1.0f}, 64)
                .find("split_k pieces of 48 elements cut the scale blocks of 32"),
            std::string::npos);
  EXPECT_NE(message("cublas-bf16", {1.0f}, 32)
                .find("block_scale_a given, but the numerics have "
                      "block_scales=none"),
            std::string::npos);
  EXPECT_THROW((void)parse_gemm_numerics("mxfp8-e4m3,promote=128"), std::invalid_argument);
}

}  // namespace
}  // namespace simprec::gemm
