// The paper-b preset (FlashAttention-1's Algorithm 1 with its state in F) against a transcription
// of Algorithm 1 in MPFR: every operation formed exactly at 600 bits and rounded to its site's
// format by the test's own round-to-nearest-even (mpfr's rounding to p bits, and a fixed quantum
// below the normal range), sharing nothing with simprec's rounding kernel or its sites. Also the
// tile rule Bc = ceil(M/4d), Br = min(ceil(M/4d), d) and its options.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"

namespace simprec::attention {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A binary format by its precision and its smallest normal exponent.
struct Precision {
  int p;
  int emin;
};
constexpr Precision kBf16{8, -126}, kFp16{11, -14}, kFp32{24, -126}, kFp64{53, -1022};

class Exact {
 public:
  Exact() { mpfr_inits2(600, a_, b_, t_, static_cast<mpfr_ptr>(nullptr)); }
  ~Exact() { mpfr_clears(a_, b_, t_, static_cast<mpfr_ptr>(nullptr)); }
  Exact(const Exact&) = delete;
  Exact& operator=(const Exact&) = delete;

  // x (held exactly in a_) rounded to nearest-even in f; the test's values stay below overflow.
  double round(const Precision& f) {
    if (mpfr_zero_p(a_)) return 0.0;
    // a_ = m 2^e with 1/2 <= |m| < 1: the leading bit's exponent is e - 1.
    if (mpfr_get_exp(a_) - 1 >= f.emin) {
      mpfr_t r;
      mpfr_init2(r, f.p);
      mpfr_set(r, a_, MPFR_RNDN);
      const double y = mpfr_get_d(r, MPFR_RNDN);  // exact: p <= 53, normal range
      mpfr_clear(r);
      return y;
    }
    const long quantum = f.emin - (f.p - 1);  // subnormals: multiples of 2^quantum
    mpfr_mul_2si(t_, a_, -quantum, MPFR_RNDN);
    mpfr_rint(t_, t_, MPFR_RNDN);  // ties to even
    mpfr_mul_2si(t_, t_, quantum, MPFR_RNDN);
    return mpfr_get_d(t_, MPFR_RNDN);
  }
  double mul(double x, double y, const Precision& f) {
    mpfr_set_d(a_, x, MPFR_RNDN);
    mpfr_mul_d(a_, a_, y, MPFR_RNDN);
    return round(f);
  }
  double add(double x, double y, const Precision& f) {
    mpfr_set_d(a_, x, MPFR_RNDN);
    mpfr_add_d(a_, a_, y, MPFR_RNDN);
    return round(f);
  }
  double div(double x, double y, const Precision& f) {
    mpfr_set_d(a_, x, MPFR_RNDN);
    mpfr_div_d(a_, a_, y, MPFR_RNDN);  // 600 bits, then p: the gap keeps the double rounding
    return round(f);                   // from ever mattering for the test's operands
  }
  double exp(double x, const Precision& f) {
    mpfr_set_d(b_, x, MPFR_RNDN);
    mpfr_exp(a_, b_, MPFR_RNDN);
    return round(f);
  }
  // sum_k x[k] y[k stride], exact, then rounded once.
  double dot(const double* x, const double* y, int64_t n, int64_t stride, const Precision& f) {
    mpfr_set_zero(a_, 1);
    for (int64_t k = 0; k < n; ++k) {
      mpfr_set_d(b_, x[k], MPFR_RNDN);
      mpfr_mul_d(b_, b_, y[k * stride], MPFR_RNDN);
      mpfr_add(a_, a_, b_, MPFR_RNDN);
    }
    return round(f);
  }
  double sum(const std::vector<double>& x, const Precision& f) {
    const std::vector<double> ones(x.size(), 1.0);
    return dot(x.data(), ones.data(), static_cast<int64_t>(x.size()), 1, f);
  }

 private:
  mpfr_t a_, b_, t_;
};

// FlashAttention-1's Algorithm 1 for one problem (N x d, N keys), key tiles of bc columns:
// F for everything but the state's operations (the rescales, the update and the division), which
// round in `state`.
std::vector<double> algorithm_1(const double* q, const double* k, const double* v, int64_t n,
                                int64_t d, int64_t bc, double scale, bool causal,
                                const Precision& f, const Precision& state) {
  Exact x;
  std::vector<double> out(n * d);
  for (int64_t i = 0; i < n; ++i) {
    double m = -kInf, m_shift = 0, l = 0;
    std::vector<double> o(d, 0.0);
    for (int64_t j0 = 0; j0 < n; j0 += bc) {
      const int64_t j1 = std::min(n, j0 + bc);
      std::vector<double> s, p;
      for (int64_t j = j0; j < j1 && !(causal && j > i); ++j) {
        s.push_back(x.dot(q + i * d, k + j * d, d, 1, f));
      }
      if (s.empty()) break;  // every key of this tile and after is masked
      const double m_tile = *std::max_element(s.begin(), s.end());
      const double tile_shift = x.mul(m_tile, scale, f);
      for (double sj : s) p.push_back(x.exp(x.add(x.mul(sj, scale, f), -tile_shift, f), f));
      const double l_tile = x.sum(p, f);
      std::vector<double> pv(d);
      for (int64_t c = 0; c < d; ++c) {
        pv[c] = x.dot(p.data(), v + j0 * d + c, static_cast<int64_t>(p.size()), d, f);
      }
      const bool raises = m == -kInf || m_tile > m;
      const double new_shift = raises ? tile_shift : m_shift;
      const double a = m == -kInf ? 0.0 : x.exp(x.add(m_shift, -new_shift, f), state);
      const double b = x.exp(x.add(tile_shift, -new_shift, f), state);
      const double la = x.mul(l, a, state);
      const double l_new = x.add(la, x.mul(b, l_tile, state), state);
      for (int64_t c = 0; c < d; ++c) {
        o[c] = x.div(x.add(x.mul(la, o[c], state), x.mul(b, pv[c], state), state), l_new, state);
      }
      l = l_new;
      if (raises) m = m_tile;
      m_shift = new_shift;
    }
    for (int64_t c = 0; c < d; ++c) out[i * d + c] = x.mul(o[c], 1.0, f);  // cast at o_out
  }
  return out;
}

struct Case {
  const char* format;
  Precision precision;
};

class PaperB : public ::testing::TestWithParam<Case> {};

// Inputs drawn at a fixed seed and rounded to f by the test's own rounding.
AttentionInputs draw(const AttentionShape& shape, const Precision& f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Exact x;
  AttentionInputs in;
  in.shape = shape;
  for (auto* t : {&in.q, &in.k, &in.v}) {
    t->resize(shape.problems() * shape.nq * shape.d);
    for (double& e : *t) e = x.mul(normal(rng), 1.0, f);
  }
  return in;
}

void expect_algorithm_1(const Case& c, bool causal, const std::vector<std::string>& sets,
                        const Precision& state) {
  // N = 37 against key tiles of ceil(128 / (4 * 8)) = 4 columns: 10 tiles, the last ragged.
  const AttentionShape shape{2, 1, 37, 37, 8, 8};
  const AttentionInputs in = draw(shape, c.precision, 11);
  AttentionConfig config = parse_numerics(std::string("paper-b,sram=128"), parse_format(c.format));
  for (const auto& s : sets) apply_override(config, s);
  config.causal = causal;
  config.threads = 1;
  const double scale = 1 / std::sqrt(8.0);
  config.scale = scale;
  const AttentionOutputs out = run_attention(in, config);
  int64_t differ = 0, nonzero = 0;
  for (int64_t p = 0; p < shape.problems(); ++p) {
    const int64_t off = p * shape.nq * shape.d;
    const auto want = algorithm_1(in.q.data() + off, in.k.data() + off, in.v.data() + off, shape.nq,
                                  shape.d, 4, scale, causal, c.precision, state);
    for (size_t e = 0; e < want.size(); ++e) {
      differ += out.o[off + e] != want[e];
      nonzero += want[e] != 0;
    }
  }
  EXPECT_EQ(differ, 0) << "of " << shape.problems() * shape.nq * shape.d << " outputs";
  EXPECT_GT(nonzero, 0);
}

TEST_P(PaperB, MatchesAlgorithm1InMpfr) {
  expect_algorithm_1(GetParam(), false, {}, GetParam().precision);
}

TEST_P(PaperB, MatchesAlgorithm1InMpfrCausal) {
  expect_algorithm_1(GetParam(), true, {}, GetParam().precision);
}

INSTANTIATE_TEST_SUITE_P(Formats, PaperB,
                         ::testing::Values(Case{"bf16", kBf16}, Case{"fp16", kFp16},
                                           Case{"fp32", kFp32}, Case{"fp64", kFp64}),
                         [](const auto& info) { return std::string(info.param.format); });

TEST(PaperBState, Fp32StateMatchesAlgorithm1InMpfr) {
  // Real kernels keep the state in fp32: the same algorithm with o_rescale, o_update and o_norm
  // in fp32, O cast to F at the end.
  for (const Case& c : {Case{"bf16", kBf16}, Case{"fp16", kFp16}}) {
    SCOPED_TRACE(c.format);
    expect_algorithm_1(c, false, {"o_rescale=fp32:rne", "o_update=fp32:rne", "o_norm=fp32:rne"},
                       kFp32);
  }
}

TEST(PaperBTiles, Fa1RuleForSramAndHeadDimension) {
  AttentionConfig c = make_preset("paper-b", formats::bf16);
  EXPECT_EQ(c.sram, 16384);
  const auto tile = [&](int64_t d) {
    const AttentionConfig t = with_sram_tile(c, d);
    return std::to_string(t.block_rows) + "x" + std::to_string(t.block_cols);
  };
  EXPECT_EQ(tile(64), "64x64");   // ceil(16384 / 256) = 64, min(64, 64)
  EXPECT_EQ(tile(128), "32x32");  // ceil(16384 / 512) = 32
  EXPECT_EQ(tile(16), "16x256");  // Bc = 256, Br = min(256, 16)
  EXPECT_EQ(tile(100), "41x41");  // ceil(16384 / 400) = ceil(40.96)
  c.block_order = find_strategy<BlockOrder>("swapped");
  EXPECT_EQ(tile(16), "256x16");
  c.block_order = find_strategy<BlockOrder>("square");
  EXPECT_EQ(tile(16), "256x256");
  c.sram = int64_t{1} << 40;  // ceil(2^40 / 64) = 2^34 columns: refused with the numbers
  try {
    (void)with_sram_tile(c, 16);
    FAIL() << "a tile of 2^34 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("17179869184"), std::string::npos) << e.what();
  }
}

TEST(PaperBTiles, ExplicitTileTurnsTheRuleOffAndSpecsReadBack) {
  AttentionConfig c = parse_numerics("paper-b,sram=2048,block_order=swapped", formats::bf16);
  EXPECT_EQ(c.sram, 2048);
  EXPECT_EQ(c.block_order.name(), "swapped");
  EXPECT_EQ(canonical_numerics(c), "paper-b,format=bf16,sram=2048,block_order=swapped");
  apply_override(c, "tile=16x32");
  EXPECT_EQ(c.sram, 0);
  EXPECT_EQ(with_sram_tile(c, 8).block_cols, 32);
  const std::string spec = canonical_numerics(c);
  EXPECT_EQ(parse_numerics(spec, formats::bf16).sram, 0) << spec;
  EXPECT_THROW(apply_override(c, "sram=-1"), std::invalid_argument);
  EXPECT_THROW(apply_override(c, "sram=1e3"), std::invalid_argument);
  EXPECT_THROW(apply_override(c, "block_order=diagonal"), std::invalid_argument);
}

TEST(PaperBTiles, SramTileIsTheTileTheRunUses) {
  // d = 8, M = 2048: Bc = ceil(2048 / 32) = 64, Br = 8; the same outputs as that tile given.
  const AttentionShape shape{1, 1, 150, 150, 8, 8};
  const AttentionInputs in = draw(shape, kBf16, 3);
  AttentionConfig by_rule = parse_numerics("paper-b,sram=2048", formats::bf16);
  AttentionConfig by_tile = parse_numerics("paper-b,tile=8x64", formats::bf16);
  AttentionConfig other = parse_numerics("paper-b,tile=64x8", formats::bf16);
  const auto o = run_attention(in, by_rule).o;
  EXPECT_EQ(o, run_attention(in, by_tile).o);
  EXPECT_NE(o, run_attention(in, other).o);  // Bc = 8: other roundings (checked, not assumed)
}

TEST(PaperBStructure, NormalisedStateRefusesOptionsItDoesNotCompute) {
  for (const char* set : {"pv_mode=per-block", "rowsum_lanes=4", "rowsum_block=warp-groups"}) {
    AttentionConfig c = make_preset("paper-b", formats::bf16);
    apply_override(c, set);
    const AttentionShape shape{1, 1, 8, 8, 4, 4};
    EXPECT_THROW(run_attention(draw(shape, kBf16, 1), c), std::invalid_argument) << set;
  }
}

}  // namespace
}  // namespace simprec::attention
