// The SageAttention presets (docs/fp8_attention.md, "SageAttention"; docs/numerics.md §9)
// against scalar implementations written from their description, fed by a quantisation written
// here (K smoothing, INT8 per block with SageAttention's fp32 steps, V per channel in e4m3):
// sage (INT8 Q.K, fp16 P.V per 64-key block with an fp16 accumulator) by its own reference
// below, sage2 (INT8 Q.K, e4m3 P.V by the wgmma model, promoted to fp32 per block) by
// tests/fp8_reference.hpp; and the fp16 accumulator's overflow bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/inputs/query_rows.hpp"
#include "tests/fp8_reference.hpp"

namespace {

using namespace simprec;
using namespace simprec::attention;
using namespace fp8_reference;

constexpr int64_t kNq = 24, kNk = 160, kD = 32;
constexpr int kBr = 16, kBc = 32;  // the tile of the specs below

// One problem's inputs after the input site (fp16), with a channel bias on K.
struct Problem {
  std::vector<double> q, k, v;
};

Problem fp16_inputs(uint64_t seed) {
  const AttentionInputs in = inputs::select_query_rows(
      inputs::generate("outliers", {1, 1, kNk, kNk, kD, kD}, seed, false), kNq);
  Problem p{in.q, in.k, in.v};
  for (std::vector<double>* x : {&p.q, &p.k, &p.v}) {
    for (double& v : *x) v = to_format(formats::fp16, v);
  }
  return p;
}

// K minus its column mean: the mean an fp32 running sum in key order over Nk in fp32, rounded to
// fp16; the difference rounded to fp16.
void smooth(std::vector<double>& k) {
  for (int64_t x = 0; x < kD; ++x) {
    float sum = 0;
    for (int64_t j = 0; j < kNk; ++j) sum += static_cast<float>(k[j * kD + x]);
    const double mean = to_format(formats::fp16, fp32_div(sum, static_cast<double>(kNk)));
    for (int64_t j = 0; j < kNk; ++j)
      k[j * kD + x] = to_format(formats::fp16, k[j * kD + x] - mean);
  }
}

// Rows [r0, r0 + n) of x (times `pre` in fp32 first) in INT8 with one scale s = fp32(amax/127):
// y = fp32(x / s), then fp32(y + 0.5 sign(y)) truncated toward zero. Returns s.
double int8_block(std::vector<double>& x, int64_t r0, int64_t n, double pre) {
  double amax = 0;
  for (int64_t i = r0 * kD; i < (r0 + n) * kD; ++i) {
    x[i] = fp32(x[i] * pre);
    amax = std::max(amax, std::fabs(x[i]));
  }
  const double s = amax == 0 ? 1.0 : fp32_div(amax, 127.0);
  for (int64_t i = r0 * kD; i < (r0 + n) * kD; ++i) {
    const double y = fp32_div(x[i], s);
    x[i] = std::trunc(fp32_add(y, std::signbit(y) ? -0.5 : 0.5));
  }
  return s;
}

// Q and K smoothed and quantised per block (Q rows of kBr, keys of kBc); scale per row or key.
void quantize_qk(Problem& p, std::vector<double>& q_s, std::vector<double>& k_s) {
  smooth(p.k);
  const double c = fp32(std::numbers::log2e / std::sqrt(static_cast<double>(kD)));
  q_s.resize(kNq);
  k_s.resize(kNk);
  for (int64_t i0 = 0; i0 < kNq; i0 += kBr) {
    const int64_t n = std::min<int64_t>(kBr, kNq - i0);
    std::fill_n(q_s.begin() + i0, n, int8_block(p.q, i0, n, c));
  }
  for (int64_t j0 = 0; j0 < kNk; j0 += kBc) {
    const int64_t n = std::min<int64_t>(kBc, kNk - j0);
    std::fill_n(k_s.begin() + j0, n, int8_block(p.k, j0, n, 1.0));
  }
}

float fp16acc_dot(const double* a, const double* b, int64_t sb, int64_t n) {
  const TensorCoreModel& model = tensor_core_model("tc:sm90-mma-fp16acc");
  std::vector<uint16_t> ab(n), bb(n);
  for (int64_t x = 0; x < n; ++x) {
    ab[x] = static_cast<uint16_t>(round_to_format(formats::fp16, unrounded_from_double(a[x]), {}));
    bb[x] =
        static_cast<uint16_t>(round_to_format(formats::fp16, unrounded_from_double(b[x * sb]), {}));
  }
  const uint32_t bits = tensor_core_dot(model, ab.data(), 1, bb.data(), 1, static_cast<int>(n), 0);
  return static_cast<float>(decode(formats::fp16, bits));
}

// SageAttention's per-block forward pass (attn_qk_int8_per_block.py) on quantised Q and K:
// x = fp32(S fp32(q_s k_s)), m_new = max(m, block max), alpha = exp2(fp32(m - m_new)), l and O
// times alpha, p = exp2(fp32(x - m_new)), l += p in column order, the block's fp16(p) . v by the
// fp16-accumulator mma from zero, added to O in fp32; O = fp16(fp32(O / l)).
std::vector<double> sage_forward(const Problem& p, const std::vector<double>& q_s,
                                 const std::vector<double>& k_s) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> o(kNq * kD), x(kBc), p16(kBc);
  for (int64_t i = 0; i < kNq; ++i) {
    double m = -kInf;
    float l = 0;
    std::vector<float> acc(kD, 0.0f);
    for (int64_t j0 = 0; j0 < kNk; j0 += kBc) {
      const int64_t bc = std::min<int64_t>(kBc, kNk - j0);
      double block_max = -kInf;
      for (int64_t j = 0; j < bc; ++j) {
        double dot = 0;  // integers: exact
        for (int64_t c = 0; c < kD; ++c) dot += p.q[i * kD + c] * p.k[(j0 + j) * kD + c];
        x[j] = fp32(dot * fp32(q_s[i] * k_s[j0 + j]));
        block_max = std::max(block_max, x[j]);
      }
      const double m_new = std::max(m, block_max);
      if (m != -kInf && m_new != m) {
        RoundingContext ctx(formats::fp32);
        const float alpha =
            static_cast<float>(decode(formats::fp32, exp2_of(ctx, fp32(m - m_new))));
        l *= alpha;
        for (float& a : acc) a *= alpha;
      }
      m = m_new;
      for (int64_t j = 0; j < bc; ++j) {
        RoundingContext ctx(formats::fp32);
        const float pj = static_cast<float>(decode(formats::fp32, exp2_of(ctx, fp32(x[j] - m))));
        l += pj;
        p16[j] = to_format(formats::fp16, pj);
      }
      for (int64_t c = 0; c < kD; ++c)
        acc[c] += fp16acc_dot(p16.data(), p.v.data() + j0 * kD + c, kD, bc);
    }
    for (int64_t c = 0; c < kD; ++c) o[i * kD + c] = to_format(formats::fp16, fp32_div(acc[c], l));
  }
  return o;
}

AttentionInputs raw_inputs(uint64_t seed) {
  return inputs::select_query_rows(
      inputs::generate("outliers", {1, 1, kNk, kNk, kD, kD}, seed, false), kNq);
}

int64_t count_differences(const std::vector<double>& a, const std::vector<double>& b) {
  int64_t differ = 0;
  for (size_t x = 0; x < a.size(); ++x) differ += a[x] != b[x];
  return differ;
}

// The engine's O for `spec_text` and, for the reference, the same inputs with Q and K
// quantised by this file's code.
struct Case {
  std::vector<double> o;
  Problem p;
  std::vector<double> q_s, k_s;
};
Case run_case(const std::string& spec_text, uint64_t seed) {
  Case c{run_attention(raw_inputs(seed), parse_numerics(spec_text, formats::fp16)).o,
         fp16_inputs(seed),
         {},
         {}};
  quantize_qk(c.p, c.q_s, c.k_s);
  return c;
}

TEST(SageAttention, SageMatchesTheScalarReference) {
  const Case c = run_case("sage,tile=16x32", 21);
  EXPECT_EQ(count_differences(c.o, sage_forward(c.p, c.q_s, c.k_s)), 0);
}

TEST(SageAttention, Sage2MatchesTheScalarReference) {
  Case c = run_case("sage2,tile=16x32", 22);
  Problem& p = c.p;
  const std::vector<double>&q_s = c.q_s, &k_s = c.k_s;
  Fp8Spec spec;
  spec.block_cols = kBc;
  spec.promote = 1;
  spec.exact_scores = true;
  spec.alpha_exp2 = true;
  spec.c = 1;
  spec.scale = std::numbers::ln2;
  spec.score_descale = [&](int64_t i, int64_t j) { return fp32(q_s[i] * k_s[j]); };
  spec.out = formats::fp16;
  // V per channel in e4m3: s = fp32(amax / 448), e4m3(fp32(v / s)).
  for (int64_t c = 0; c < kD; ++c) {
    double amax = 0;
    for (int64_t j = 0; j < kNk; ++j) amax = std::max(amax, std::fabs(p.v[j * kD + c]));
    const double s = fp32_div(amax, 448.0);
    spec.v_scale.push_back(s);
    for (int64_t j = 0; j < kNk; ++j) {
      p.v[j * kD + c] = to_format(formats::e4m3fn, fp32_div(p.v[j * kD + c], s));
    }
  }
  const std::vector<double> expected =
      fp8_forward(spec, kNq, kNk, kD, p.q.data(), p.k.data(), p.v.data());
  EXPECT_EQ(count_differences(c.o, expected), 0);
}

TEST(SageAttention, PresetsAreWhatTheDocsSay) {
  const AttentionConfig s1 = make_preset("sage", formats::fp16);
  EXPECT_TRUE(s1.quant.qk_int8 && s1.quant.k_smooth && !s1.quant.v);
  EXPECT_EQ(s1.quant.qk_scale, QuantScale::kBlock);
  EXPECT_EQ(s1.block_rows, 128);
  EXPECT_EQ(s1.block_cols, 64);
  EXPECT_EQ(s1.site(Site::kPvAcc).accumulation, "tc:sm90-mma-fp16acc");
  EXPECT_EQ(s1.pv_mode.name(), "per-block");
  const AttentionConfig s2 = make_preset("sage2", formats::bf16);
  EXPECT_EQ(s2.quant.v, formats::e4m3fn);
  EXPECT_EQ(s2.quant.v_scale, QuantScale::kChannel);
  EXPECT_EQ(s2.block_rows, 16);
  EXPECT_EQ(s2.block_cols, 128);
  EXPECT_EQ(s2.pv_promote_blocks, 1);
  EXPECT_EQ(s2.site(Site::kPvAcc).accumulation, "tc:sm90-wgmma-e4m3");
  EXPECT_THROW(make_preset("sage", formats::bf16), std::invalid_argument);
}

// The fp16 accumulator of sage's P.V holds one 64-key block: with every score equal (Q = 0),
// P = 1 and V = v everywhere, the block's sum is 64 v, exact in fp16 up to 65504 = 64 * 1023.5
// and infinite from 65520 (the rounding midpoint above it): v = 1024 overflows.
TEST(SageAttention, Fp16AccumulatorOverflowsAtTheBound) {
  const auto o_of = [](double v) {
    AttentionInputs in;
    in.shape = {1, 1, 2, 256, 32, 32};
    in.q.assign(2 * 32, 0.0);
    in.k.assign(256 * 32, 1.0);
    in.v.assign(256 * 32, v);
    return run_attention(in, parse_numerics("sage", formats::fp16)).o[0];
  };
  EXPECT_EQ(o_of(1023.5), 1023.5);
  EXPECT_TRUE(std::isinf(o_of(1024.0)));
  // sage2's fp32-promoted e4m3 chains do not overflow there.
  AttentionInputs in;
  in.shape = {1, 1, 2, 256, 32, 32};
  in.q.assign(2 * 32, 0.0);
  in.k.assign(256 * 32, 1.0);
  in.v.assign(256 * 32, 1024.0);
  EXPECT_EQ(run_attention(in, parse_numerics("sage2", formats::fp16)).o[0], 1024.0);
}

TEST(SageAttention, SmoothingAndBlockScalesChangeTheResult) {
  const AttentionInputs raw = raw_inputs(23);
  const auto o_of = [&](const std::string& text) {
    return run_attention(raw, parse_numerics(text, formats::fp16)).o;
  };
  const std::vector<double> sage = o_of("sage,tile=16x32");
  EXPECT_NE(sage, o_of("sage,tile=16x32,k_smooth=off"));
  EXPECT_NE(sage, o_of("sage,tile=16x32,qk_scale=head"));
}

}  // namespace
