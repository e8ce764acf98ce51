// `validate --locate` under a time limit: where a run of its search is cancelled, the report
// keeps the first differences and the alternatives tried before and says how many were left;
// without stop_when_cancelled (Python's Ctrl-C) the Cancelled goes on to the caller. The
// "kernel" here is the emulation of fa2 with key blocks of 32, described with key blocks of 64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "emulation/cancellation.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/validate/locate.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::validate {
namespace {

using attention::AttentionConfig;
using attention::AttentionInputs;
using attention::AttentionOutputs;
using attention::AttentionShape;
using plugins::HostTensor;

const AttentionShape kShape{1, 1, 64, 64, 16, 16};

// O (bf16) and the LSE (fp32) of a run, as a forward kernel writes them.
std::vector<HostTensor> outputs_of(const AttentionOutputs& out) {
  HostTensor o = HostTensor::zeros("O", "bf16", {1, 1, 64, 16});
  HostTensor lse = HostTensor::zeros("LSE", "fp32", {1, 1, 64});
  for (int64_t i = 0; i < o.element_count(); ++i) set_value(o, i, out.o[i]);
  for (int64_t i = 0; i < lse.element_count(); ++i) set_value(lse, i, out.lse[i]);
  return {o, lse};
}

struct Case {
  AttentionInputs in = inputs::generate("normal", kShape, 5, false);
  AttentionConfig model = attention::parse_numerics("fa2,tile=64x64", formats::bf16);
  std::vector<HostTensor> kernel = outputs_of(
      attention::run_attention(in, attention::parse_numerics("fa2,tile=64x32", formats::bf16)));
  std::vector<HostTensor> emulated = outputs_of(attention::run_attention(in, model));
  int calls = 0;

  // The emulation, cancelled from its `stop_at`-th call on (the first call probes the row).
  AttentionRunner runner(int stop_at) {
    return [this, stop_at](const AttentionConfig& c, const attention::RunOptions& options) {
      if (++calls >= stop_at) throw Cancelled("stopped by the test");
      return attention::run_attention(in, c, options);
    };
  }
};

TEST(ValidateLocateStop, KeepsWhatItFoundBeforeItsRunWasCancelled) {
  Case whole;
  const LocateReport all =
      locate_attention(kShape, whole.model, whole.kernel, whole.emulated, whole.runner(1 << 30));
  ASSERT_FALSE(all.differences.empty());
  ASSERT_GT(all.alternatives.size(), 10u);
  EXPECT_TRUE(all.stopped.empty());
  EXPECT_EQ(all.untried, 0);
  const auto tile = std::find_if(all.alternatives.begin(), all.alternatives.end(),
                                 [](const Alternative& a) { return a.value == "64x32"; });
  ASSERT_NE(tile, all.alternatives.end());
  EXPECT_TRUE(tile->agreement.row_agrees);
  EXPECT_GE(tile - all.alternatives.begin(), 4);

  Case stopped;
  const LocateReport r = locate_attention(kShape, stopped.model, stopped.kernel, stopped.emulated,
                                          stopped.runner(6), true);
  EXPECT_EQ(r.stopped, "stopped by the test");
  ASSERT_EQ(r.alternatives.size(), 4u);  // calls 2 to 5
  EXPECT_EQ(r.untried, static_cast<int64_t>(all.alternatives.size()) - 4);
  EXPECT_TRUE(r.probe.has_value());
  EXPECT_EQ(r.differences.size(), all.differences.size());
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.alternatives[i].option, all.alternatives[i].option);
    EXPECT_EQ(r.alternatives[i].value, all.alternatives[i].value);
    EXPECT_EQ(r.alternatives[i].agreement.agreeing, all.alternatives[i].agreement.agreeing);
  }

  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_locate(out, r);
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_NE(printed.find("\nlocate stopped untried=" + std::to_string(r.untried) +
                         " stopped by the test\nlocate alternatives tried=4 "),
            std::string::npos)
      << printed;
  // None of the four makes the row agree (tile=64x32, which does, comes later).
  EXPECT_NE(printed.find("\nlocate best none of those tried\n"), std::string::npos) << printed;
}

TEST(ValidateLocateStop, PassesTheCancellationOnUnlessAskedToStop) {
  Case c;
  EXPECT_THROW(locate_attention(kShape, c.model, c.kernel, c.emulated, c.runner(3)), Cancelled);
}

}  // namespace
}  // namespace simprec::validate
