// Scaled FP8 inputs (docs/fp8_attention.md, "Scaled inputs"): FlashAttention-3's per-head
// descale factors, per-tensor scales and per-block scales of Q and K, per-head and per-channel
// scales of V, against the scalar FP8 forward pass of tests/fp8_reference.hpp fed by a
// quantisation written here from the same description (amax, fp32 quotients by MPFR, e4m3
// rounding by the emulation core). Inputs have an outlier head and an outlier block of keys, so
// that the three granularities give different scales.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/inputs/query_rows.hpp"
#include "tests/fp8_reference.hpp"

namespace {

using namespace simprec;
using namespace simprec::attention;
using namespace fp8_reference;

constexpr int64_t kHeads = 3, kNq = 24, kNk = 160, kD = 32;
constexpr int kBr = 16, kBc = 32;  // the tile of every spec below

// Head 1 is 30 times larger than the others; keys 64..95 of head 2 are 20 times larger.
AttentionInputs outlier_inputs(uint64_t seed) {
  AttentionInputs in = inputs::select_query_rows(
      inputs::generate("normal", {1, kHeads, kNk, kNk, kD, kD}, seed, false), kNq);
  for (std::vector<double>* x : {&in.q, &in.k, &in.v}) {
    const int64_t rows = x == &in.q ? kNq : kNk;
    for (int64_t i = 0; i < rows * kD; ++i) (*x)[rows * kD + i] *= 30;
  }
  for (int64_t j = 64; j < 96; ++j) {
    for (int64_t x = 0; x < kD; ++x) in.k[(2 * kNk + j) * kD + x] *= 20;
  }
  return in;
}

// Every value of x[first, first + count) times `pre` in fp32, then quantised with one scale:
// s = fp32(amax / 448), elements e4m3(fp32(x / s)); returns s.
double quantize_group(std::vector<double>& x, const std::vector<int64_t>& at, double pre) {
  double amax = 0;
  for (int64_t i : at) {
    if (pre != 1.0) x[i] = fp32(x[i] * pre);  // an exact product of two fp32 values, rounded
    amax = std::max(amax, std::fabs(x[i]));
  }
  const double s = amax == 0 ? 1.0 : fp32_div(amax, 448.0);
  for (int64_t i : at) x[i] = to_format(formats::e4m3fn, fp32_div(x[i], s));
  return s;
}

std::vector<int64_t> range(int64_t first, int64_t count) {
  std::vector<int64_t> r(count);
  for (int64_t i = 0; i < count; ++i) r[i] = first + i;
  return r;
}

enum class Granularity { kTensor, kHead, kBlock };

// The engine's O for `spec_text` against the reference with inputs quantised at `g` (V per
// head, or per channel with `v_channels`).
void expect_scaled_matches_reference(const std::string& spec_text, Granularity g, bool v_channels) {
  const AttentionInputs raw = outlier_inputs(11);
  const AttentionConfig config = parse_numerics(spec_text, formats::e4m3fn);
  const AttentionOutputs out = run_attention(raw, config);
  AttentionInputs in = raw;  // at the input site: bf16
  for (std::vector<double>* x : {&in.q, &in.k, &in.v}) {
    for (double& v : *x) v = to_format(formats::bf16, v);
  }
  const double scale = 1 / std::sqrt(static_cast<double>(kD));
  const double c = fp32(scale * std::numbers::log2e);
  // Q and K scales per (head, row): tensor and head groups are whole tensors or heads.
  std::vector<double> q_s(kHeads * kNq), k_s(kHeads * kNk), v_s(kHeads * kD);
  if (g == Granularity::kTensor) {
    const double qs = quantize_group(in.q, range(0, kHeads * kNq * kD), 1.0);
    const double ks = quantize_group(in.k, range(0, kHeads * kNk * kD), 1.0);
    const double vs = quantize_group(in.v, range(0, kHeads * kNk * kD), 1.0);
    std::fill(q_s.begin(), q_s.end(), qs);
    std::fill(k_s.begin(), k_s.end(), ks);
    std::fill(v_s.begin(), v_s.end(), vs);
  }
  for (int64_t h = 0; h < kHeads; ++h) {
    if (g == Granularity::kHead) {
      std::fill_n(q_s.begin() + h * kNq, kNq,
                  quantize_group(in.q, range(h * kNq * kD, kNq * kD), 1.0));
      std::fill_n(k_s.begin() + h * kNk, kNk,
                  quantize_group(in.k, range(h * kNk * kD, kNk * kD), 1.0));
    }
    if (g == Granularity::kBlock) {
      for (int64_t i0 = 0; i0 < kNq; i0 += kBr) {
        const int64_t n = std::min<int64_t>(kBr, kNq - i0);
        std::fill_n(q_s.begin() + h * kNq + i0, n,
                    quantize_group(in.q, range((h * kNq + i0) * kD, n * kD), c));
      }
      for (int64_t j0 = 0; j0 < kNk; j0 += kBc) {
        const int64_t n = std::min<int64_t>(kBc, kNk - j0);
        std::fill_n(k_s.begin() + h * kNk + j0, n,
                    quantize_group(in.k, range((h * kNk + j0) * kD, n * kD), 1.0));
      }
    }
    for (int64_t x = 0; x < kD; ++x) {
      std::vector<int64_t> at;
      for (int64_t j = 0; j < kNk; ++j) at.push_back((h * kNk + j) * kD + x);
      if (v_channels) v_s[h * kD + x] = quantize_group(in.v, at, 1.0);
    }
    if (!v_channels && g != Granularity::kTensor) {
      std::fill_n(v_s.begin() + h * kD, kD,
                  quantize_group(in.v, range(h * kNk * kD, kNk * kD), 1.0));
    }
  }
  int64_t differ = 0;
  for (int64_t h = 0; h < kHeads; ++h) {
    Fp8Spec spec;
    spec.block_cols = kBc;
    if (g == Granularity::kBlock) {
      // Scores in log2 units: exp2(x - m), alpha = exp(ln 2 (m_old - m_new)).
      spec.c = 1;
      spec.scale = std::numbers::ln2;
      spec.score_descale = [&](int64_t i, int64_t j) {
        return fp32(q_s[h * kNq + i] * k_s[h * kNk + j]);
      };
    } else {
      spec.c = fp32(c * fp32(q_s[h * kNq] * k_s[h * kNk]));
      spec.scale = spec.c * std::numbers::ln2;
    }
    spec.v_scale.assign(v_s.begin() + h * kD, v_s.begin() + (h + 1) * kD);
    const std::vector<double> expected =
        fp8_forward(spec, kNq, kNk, kD, in.q.data() + h * kNq * kD, in.k.data() + h * kNk * kD,
                    in.v.data() + h * kNk * kD);
    for (int64_t x = 0; x < kNq * kD; ++x) differ += out.o[h * kNq * kD + x] != expected[x];
  }
  EXPECT_EQ(differ, 0) << spec_text << ": " << differ << " of " << kHeads * kNq * kD
                       << " values differ";
}

const std::string kScaled = "fa3-fp8,tile=16x32,input=bf16:rne,qk_quant=e4m3fn,v_quant=e4m3fn";

TEST(ScaledAttention, PerHeadDescaleMatchesTheReference) {
  expect_scaled_matches_reference(kScaled + ",qk_scale=head,v_scale=head", Granularity::kHead,
                                  false);
}

TEST(ScaledAttention, PerTensorScaleMatchesTheReference) {
  expect_scaled_matches_reference(kScaled + ",qk_scale=tensor,v_scale=tensor", Granularity::kTensor,
                                  false);
}

TEST(ScaledAttention, PerBlockScalesMatchTheReference) {
  expect_scaled_matches_reference(kScaled + ",qk_scale=block,v_scale=channel", Granularity::kBlock,
                                  true);
}

TEST(ScaledAttention, GranularitiesGiveDifferentResults) {
  // The options reach the computation: each granularity's O differs from the others'.
  const AttentionInputs raw = outlier_inputs(11);
  const auto o_of = [&](const std::string& text) {
    return run_attention(raw, parse_numerics(kScaled + "," + text, formats::e4m3fn)).o;
  };
  const std::vector<double> tensor = o_of("qk_scale=tensor,v_scale=tensor");
  const std::vector<double> head = o_of("qk_scale=head,v_scale=head");
  const std::vector<double> block = o_of("qk_scale=block,v_scale=channel");
  EXPECT_NE(tensor, head);
  EXPECT_NE(head, block);
}

TEST(ScaledAttention, OptionsAreCheckedAndCanonical) {
  EXPECT_EQ(canonical_numerics(parse_numerics(kScaled + ",qk_scale=block", formats::e4m3fn)),
            "fa3-fp8,format=e4m3fn,qk_quant=e4m3fn,qk_scale=block,v_quant=e4m3fn,tile=16x32,"
            "input=bf16:rne");
  for (const char* bad : {"fa2,qk_quant=int9", "fa2,qk_scale=channel", "fa2,v_scale=block",
                          "fa2,v_quant=int8", "fa2,k_smooth=yes"}) {
    EXPECT_THROW(parse_numerics(bad, formats::bf16), std::invalid_argument) << bad;
  }
  const AttentionInputs raw = inputs::generate("normal", {1, 1, 8, 8, 4, 4}, 5, false);
  const AttentionInputs with_grad = inputs::generate("normal", {1, 1, 8, 8, 4, 4}, 5, true);
  const auto run = [](const AttentionInputs& in, const std::string& text) {
    return run_attention(in, parse_numerics(text, formats::bf16));
  };
  EXPECT_THROW(run(with_grad, "fa2,qk_quant=e4m3fn"), std::invalid_argument);
  EXPECT_THROW(run(raw, "fa2,qk_quant=e4m3fn,exp_impl=natural"), std::invalid_argument);
  EXPECT_THROW(run(raw, "fa2,v_quant=e4m3fn,kv_splits=2"), std::invalid_argument);
  EXPECT_NO_THROW(run(raw, "fa2,qk_quant=e4m3fn,v_quant=e4m3fn,k_smooth=on"));
  // A value the input site turns into an infinity (fp16 beyond 65504) cannot be quantised.
  AttentionInputs huge = raw;
  huge.v[3] = 1e6;
  EXPECT_THROW(run(huge, "fa2,input=fp16:rne,v_quant=e4m3fn"), std::invalid_argument);
}

}  // namespace
