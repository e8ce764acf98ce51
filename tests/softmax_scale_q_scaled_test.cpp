// softmax_scale=q-scaled-fp32 / q-scaled-input: Q times the fp32 scale before the scores. The
// oracle folds the scale into Q here, with the C++ float product (IEEE single, -ffp-contract=off)
// and a bf16 cast written from the bits, and runs the same numerics with scale 1 and an fp32
// input site on that Q: every O and LSE bit must agree. At D = 24 the scale 1/sqrt(24) is not an
// fp32 value, so folding it into Q must change bits against the scale applied to the scores.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

constexpr const char* kSpec = "fp32,format=bf16,tile=64x32,p_cast=bf16:rne,o_out=bf16:rne";

// float -> bf16 -> float, round to nearest even (finite values only, as here).
float bf16_rne(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::bit_cast<float>(u & 0xffff0000u);
}

AttentionInputs bf16_inputs(bool grad) {
  AttentionInputs in = inputs::generate("normal", {1, 2, 70, 90, 24, 24}, 5, grad);
  for (auto* x : {&in.q, &in.k, &in.v, &in.d_out})
    for (double& v : *x) v = bf16_rne(static_cast<float>(v));
  return in;
}

AttentionOutputs run(const std::string& spec, const AttentionInputs& in, double scale) {
  AttentionConfig c = parse_numerics(spec, formats::bf16);
  c.scale = scale;
  return run_attention(in, c);
}

AttentionOutputs folded_by_hand(const AttentionInputs& given, bool to_bf16) {
  AttentionInputs in = given;
  const float s = static_cast<float>(1.0 / std::sqrt(24.0));
  for (double& q : in.q) {
    const float product = static_cast<float>(q) * s;
    q = to_bf16 ? bf16_rne(product) : product;
  }
  return run(std::string(kSpec) + ",input=fp32:rne", in, 1.0);
}

TEST(SoftmaxScaleQScaled, Fp32FoldsTheScaleIntoQ) {
  const AttentionInputs in = bf16_inputs(false);
  const AttentionOutputs got =
      run(std::string(kSpec) + ",softmax_scale=q-scaled-fp32", in, 1.0 / std::sqrt(24.0));
  const AttentionOutputs want = folded_by_hand(in, false);
  EXPECT_EQ(got.o, want.o);
  EXPECT_EQ(got.lse, want.lse);
  const AttentionOutputs scores_scaled = run(kSpec, in, 1.0 / std::sqrt(24.0));
  EXPECT_NE(got.lse, scores_scaled.lse);
}

TEST(SoftmaxScaleQScaled, InputCastsTheScaledQBack) {
  const AttentionInputs in = bf16_inputs(false);
  const AttentionOutputs got =
      run(std::string(kSpec) + ",softmax_scale=q-scaled-input", in, 1.0 / std::sqrt(24.0));
  const AttentionOutputs want = folded_by_hand(in, true);
  EXPECT_EQ(got.o, want.o);
  EXPECT_EQ(got.lse, want.lse);
  EXPECT_NE(got.lse, folded_by_hand(in, false).lse);
}

TEST(SoftmaxScaleQScaled, RefusesTheBackwardPass) {
  try {
    run(std::string(kSpec) + ",softmax_scale=q-scaled-fp32", bf16_inputs(true), 0.2);
    FAIL() << "a run with dO was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("forward-only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace simprec::attention
