// The papers' claims, measured (heavy tier: tens of seconds to minutes).
//
// Paper A: on repeated-maximum inputs with concentrated attention and values of a common sign,
// paper A's reference numerics (per-block P.V rounded to bf16, accumulated in bf16) bias O in one
// direction, many standard errors from zero, standard errors taken across 32 independent draws.
// Paper B: flash attention with low-precision intermediates deviates from the fp64 reference
// more than standard attention in the same precision, the more so the longer the sequence at
// fixed tiles, and less with larger tiles; the fa2 numerics (fp32 softmax and accumulators, one
// cast of O) do not show this.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "lib/attention/attention.hpp"
#include "lib/attention/attribution.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/metrics/error_metrics.hpp"

namespace simprec::attention {
namespace {

struct Measured {
  metrics::ErrorMetrics o, delta;
};

Measured measure(const AttentionInputs& in, const AttentionConfig& c) {
  const auto out = run_attention(in, c);
  const auto ref = reference_attention(round_inputs(in, c), softmax_scale(c, in.shape), c.causal);
  Measured m;
  m.o = metrics::compute_metrics(out.o, ref.o, in.shape.batch, formats::fp64);
  if (in.has_grad())
    m.delta = metrics::compute_metrics(out.delta, ref.delta, in.shape.batch, formats::fp64);
  return m;
}

const AttentionInputs& paper_a_inputs() {
  static const AttentionInputs in =
      inputs::generate("repeated-max", {32, 1, 256, 256, 64, 64}, 1, true);
  return in;
}

// Bias thresholds: |z| > 5 has a two-sided normal p-value below 6e-7; with 32 draws the t
// distribution's tail at 5 is still below 3e-5.
TEST(PaperA, PaperAPresetBiasesOutputAndDelta) {
  const auto m = measure(paper_a_inputs(), make_preset("paper-a"));
  // V < 0: a negative signed error is a magnitude pushed outward.
  EXPECT_LT(m.o.bias_z(), -5.0);
  EXPECT_GT(m.o.magnitude_bias_z(), 5.0);
  // dO ~ N(1, 0.5): the error of D = rowsum(dO o O) follows O's sign.
  EXPECT_LT(m.delta.bias_z(), -5.0);
}

TEST(PaperA, AttributionNamesThePvAndOSites) {
  const AttentionConfig c = make_preset("paper-a");
  const auto& in = paper_a_inputs();
  const auto ref = reference_attention(round_inputs(in, c), softmax_scale(c, in.shape), false);
  const auto a = attribute_sites(in, c, ref, "o");
  ASSERT_FALSE(a.stochastic.empty());
  // Made unbiased by stochastic rounding, the top site removes most of the bias.
  const std::string top(site_name(a.stochastic.front().site));
  EXPECT_TRUE(top == "pv_acc" || top == "o_update" || top == "o_norm") << top;
  EXPECT_GT(a.stochastic.front().fraction, 0.8);
}

TEST(PaperA, BetaRowmaxShrinksTheBias) {
  AttentionConfig c = make_preset("paper-a");
  const auto plain = measure(paper_a_inputs(), c);
  apply_mitigation(c, "beta-rowmax:2");
  const auto mitigated = measure(paper_a_inputs(), c);
  // At least a threefold reduction of |bias| (measured: about 4.5x; what remains has the
  // opposite sign and is still significant, see docs/findings.md).
  EXPECT_LT(std::fabs(mitigated.o.bias), std::fabs(plain.o.bias) / 3);
}

TEST(PaperA, StochasticRoundingOfOSitesRemovesMostOfTheBias) {
  AttentionConfig c = make_preset("paper-a");
  const auto plain = measure(paper_a_inputs(), c);
  apply_mitigation(c, "sr-o");
  const auto mitigated = measure(paper_a_inputs(), c);
  EXPECT_LT(std::fabs(mitigated.o.bias), std::fabs(plain.o.bias) / 10);
}

double rms_ratio(const char* preset, int64_t n, int tile) {
  const auto in = inputs::generate("normal", {4, 1, n, n, 64, 64}, 1, false);
  AttentionConfig flash = make_preset(preset);
  flash.block_rows = flash.block_cols = tile;
  AttentionConfig standard = flash;
  standard.algorithm = find_strategy<Algorithm>("standard");
  return measure(in, flash).o.rms / measure(in, standard).o.rms;
}

TEST(PaperB, LowPrecisionFlashDeviatesMoreWithLengthAndLessWithLargerTiles) {
  const double r256 = rms_ratio("flash-lp", 256, 64);
  const double r2048 = rms_ratio("flash-lp", 2048, 64);
  const double r2048_big_tiles = rms_ratio("flash-lp", 2048, 256);
  EXPECT_GT(r2048, 1.4);         // measured 1.81
  EXPECT_GT(r2048, r256 + 0.4);  // measured 1.12 -> 1.81
  EXPECT_LT(r2048_big_tiles, r2048 - 0.2);
}

TEST(PaperB, Fa2NumericsDoNotDeviateMoreThanStandardAttention) {
  for (const int64_t n : {256, 2048})
    EXPECT_LT(rms_ratio("fa2", n, 64), 1.02) << n;  // measured 0.93-0.96
}

}  // namespace
}  // namespace simprec::attention
