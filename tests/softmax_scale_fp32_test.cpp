// softmax_scale=fp32: the scale rounded to fp32 once before any use. A run with scale 0.3 and the
// fp32 strategy must give the bits of a run handed fp32(0.3) = 0.300000011920928955078125 (its
// exact value, written here) with the scale used as given; with the scale as given, 0.3 must give
// other bits (the rounding matters).
#include <gtest/gtest.h>

#include <utility>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

AttentionOutputs run(const char* spec, double scale) {
  const AttentionInputs in = inputs::generate("normal", {1, 2, 40, 40, 24, 24}, 9, true);
  AttentionConfig c = parse_numerics(spec, formats::bf16);
  c.scale = scale;
  return run_attention(in, c);
}

bool same(const AttentionOutputs& a, const AttentionOutputs& b) {
  return a.o == b.o && a.lse == b.lse && a.dq == b.dq && a.dk == b.dk && a.dv == b.dv;
}

TEST(SoftmaxScaleFp32, RoundsTheScaleBeforeEveryUse) {
  // Each model with its scale as given and with it rounded (torch-flash rounds it itself).
  const std::pair<const char*, const char*> models[] = {
      {"torch-flash,tile=32x32,kv_splits=1,softmax_scale=exact",
       "torch-flash,tile=32x32,kv_splits=1"},
      {"torch-math", "torch-math,softmax_scale=fp32"}};
  for (const auto& [given, fp32] : models) {
    SCOPED_TRACE(given);
    const AttentionOutputs rounded = run(fp32, 0.3);
    EXPECT_TRUE(same(rounded, run(given, 0.300000011920928955078125)));
    EXPECT_FALSE(same(rounded, run(given, 0.3)));
  }
}

TEST(SoftmaxScaleFp32, KeepsARepresentableScale) {
  // 1/8 is an fp32 value: the strategy changes nothing.
  EXPECT_TRUE(same(run("fa2,softmax_scale=fp32", 0.125), run("fa2", 0.125)));
}

}  // namespace
}  // namespace simprec::attention
