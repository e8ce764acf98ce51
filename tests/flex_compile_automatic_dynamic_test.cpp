// flex_compile=automatic-dynamic: torch.compile's policy picks static for the lengths a graph was
// first compiled for (compiled_for; auto: the call's own) and dynamic for any other. On a shape
// where the two differ (lengths multiples of 128, so static fuses every exponent argument and
// dynamic none), each choice must give exactly the bits of the strategy it names.
#include <gtest/gtest.h>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

AttentionOutputs run(const std::string& spec) {
  const AttentionInputs in = inputs::generate("normal", {1, 1, 256, 256, 64, 64}, 4, true);
  return run_attention(in, parse_numerics(spec, formats::bf16));
}

bool same(const AttentionOutputs& a, const AttentionOutputs& b) {
  return a.o == b.o && a.lse == b.lse && a.dq == b.dq && a.dk == b.dk && a.dv == b.dv;
}

TEST(FlexCompileAutomaticDynamic, FirstCompilationStaticRecompilationDynamic) {
  const AttentionOutputs first_call = run("torch-flex,flex_compile=static");
  const AttentionOutputs recompiled = run("torch-flex,flex_compile=dynamic");
  ASSERT_FALSE(same(first_call, recompiled));  // the shape tells the two apart
  EXPECT_TRUE(same(run("torch-flex,flex_compile=automatic-dynamic"), first_call));
  EXPECT_TRUE(
      same(run("torch-flex,flex_compile=automatic-dynamic,compiled_for=256x256x64"), first_call));
  EXPECT_TRUE(
      same(run("torch-flex,flex_compile=automatic-dynamic,compiled_for=128x128x64"), recompiled));
  EXPECT_TRUE(
      same(run("torch-flex,flex_compile=automatic-dynamic,compiled_for=256x256x128"), recompiled));
}

TEST(FlexCompileAutomaticDynamic, CompiledForIsThreeLengths) {
  EXPECT_THROW(parse_numerics("torch-flex,compiled_for=256x256", formats::bf16),
               std::invalid_argument);
  EXPECT_THROW(parse_numerics("torch-flex,compiled_for=0x256x64", formats::bf16),
               std::invalid_argument);
}

}  // namespace
}  // namespace simprec::attention
