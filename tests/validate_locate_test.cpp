// `validate --locate` on a deliberately mis-described kernel: examples/plugin/online_softmax.c
// (a textbook online softmax, rescale=natural-shift and lse_impl=shift-log) validated against
// its spec without the rescale, and with lse_impl=exact. On the outliers inputs of seed 10 some
// rows' max turns from negative to positive in a later key block, where the two rescales differ
// (fp32(m_old - m_new) is not exact there). The report must name the site the description lacks,
// locate the first differing element (found here again from the outputs), also where the
// kernel supplies its own expf and logf, and report nothing when the description is right.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "lib/validate/validation.hpp"
#include "lib/validate/validation_inputs.hpp"
#include "plugins/host/plugin.hpp"
#include "tests/cli_support.hpp"

namespace simprec::testing {
namespace {

using validate::Alternative;
using validate::ValidationResult;

const std::string kDeclared =
    "fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=64x32,rescale=natural-shift,lse_impl=shift-log";
const std::string kWithoutRescale =
    "fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=64x32,lse_impl=shift-log";
const std::string kExactLse =
    "fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=64x32,rescale=natural-shift,lse_impl=exact";
const std::string kKeyBlocksOf64 =
    "fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=64x64,rescale=natural-shift,lse_impl=shift-log";
const std::string kPTruncated =
    "fp32,p_cast=bf16:rtz,o_out=bf16:rne,tile=64x32,rescale=natural-shift,lse_impl=shift-log";
const std::string kInputs =
    "--generate outliers --dim B=1 --dim H=2 --dim Sq=96 --dim D=16 --seed 10";

ValidationResult locate(const std::string& model,
                        const std::string& kernel = "online_softmax_bf16") {
  plugins::OpenOptions options;
  options.isolation = plugins::Isolation::kInProcess;
  const auto plugin = plugins::open_plugin(SIMPREC_TEST_ONLINE_SOFTMAX_PLUGIN, options);
  validate::InputChoices choices;
  choices.generator = "outliers";
  choices.dimensions = {{"B", 1}, {"H", 2}, {"Sq", 96}, {"D", 16}};
  choices.seed = 10;
  const plugins::KernelRequest request =
      validate::make_validation_request(plugin->info().kernel(kernel), choices);
  validate::ValidationOptions o;
  o.model = model;
  o.locate = true;
  return validate::validate_kernel(*plugin, request, o);
}

const Alternative* find(const ValidationResult& r, const std::string& option,
                        const std::string& value) {
  for (const Alternative& a : r.locate->alternatives) {
    if (a.option == option && a.value == value) return &a;
  }
  return nullptr;
}

// The alternative names `value` in `option` and makes the located row and every row agree, and
// no alternative makes more rows agree.
void expect_named(const ValidationResult& r, Alternative::Kind kind, const std::string& option,
                  const std::string& value) {
  ASSERT_TRUE(r.locate);
  const Alternative* a = find(r, option, value);
  ASSERT_NE(a, nullptr) << option << "=" << value << " was not tried";
  EXPECT_EQ(a->kind, kind);
  EXPECT_TRUE(a->changes);
  EXPECT_TRUE(a->agreement.row_agrees);
  EXPECT_EQ(a->agreement.rows, 96);
  EXPECT_EQ(a->agreement.agreeing, 96);
  for (const auto& o : a->agreement.outputs) EXPECT_EQ(o.agreeing, o.rows) << o.output;
  EXPECT_LT(r.locate->model.agreeing, 96);
  EXPECT_FALSE(r.locate->model.row_agrees);
  // The model's LSE rows that agree on the located problem, counted here from the outputs.
  const int64_t p = r.locate->located->problem;
  int64_t lse_rows_equal = 0;
  for (int64_t i = p * 96; i < (p + 1) * 96; ++i) {
    lse_rows_equal += r.kernel_outputs[1].bits_at(i) == r.emulated_outputs[1].bits_at(i);
  }
  ASSERT_EQ(r.locate->model.outputs.at(1).output, "LSE");
  EXPECT_EQ(r.locate->model.outputs.at(1).agreeing, lse_rows_equal);
}

// The first element of each output where the kernel's and the emulation's bits differ, and the
// located row's forward pass in `blocks` key blocks.
void expect_first_differences(const ValidationResult& r, size_t blocks) {
  size_t reported = 0;
  for (size_t t = 0; t < r.kernel_outputs.size(); ++t) {
    const auto& k = r.kernel_outputs[t];
    const auto& e = r.emulated_outputs[t];
    std::optional<int64_t> first;
    for (int64_t i = 0; i < k.element_count() && !first; ++i) {
      if (k.bits_at(i) != e.bits_at(i)) first = i;
    }
    if (!first) continue;
    ASSERT_LT(reported, r.locate->differences.size());
    const auto& d = r.locate->differences[reported++];
    EXPECT_EQ(d.output, k.name);
    EXPECT_EQ(d.index, *first);
    const int64_t columns = k.name == "LSE" ? 1 : 16;
    EXPECT_EQ(d.row, *first / columns % 96);
    EXPECT_EQ(d.h, *first / columns / 96);
    EXPECT_EQ(d.kernel_bits, k.bits_at(*first));
    EXPECT_EQ(d.emulation_bits, e.bits_at(*first));
    EXPECT_EQ(d.column.has_value(), k.name != "LSE");
  }
  EXPECT_EQ(reported, r.locate->differences.size());
  ASSERT_TRUE(r.locate->located);
  // The located row's forward pass: its key blocks and the located value as the emulation
  // wrote it.
  const auto& located = *r.locate->located;
  ASSERT_TRUE(r.locate->probe);
  EXPECT_EQ(r.locate->probe->blocks.size(), blocks);
  if (located.column) {
    EXPECT_EQ(located.emulation, r.locate->probe->o.at(*located.column));
  } else {
    EXPECT_EQ(located.emulation, r.locate->probe->lse);
  }
}

TEST(ValidateLocate, NamesTheRescaleOfAKernelDescribedWithoutIt) {
  const ValidationResult r = locate(kWithoutRescale);
  expect_first_differences(r, 3);
  expect_named(r, Alternative::Kind::kSlot, "rescale", "natural-shift");
  // The located row's max turns positive in its last key block: there alpha was formed, once.
  const auto& blocks = r.locate->probe->blocks;
  EXPECT_TRUE(blocks.back().rescaled);
  EXPECT_LT(blocks.back().m_old, 0.0);
  EXPECT_GT(blocks.back().m_new, 0.0);
}

// The same kernel handing the emulation its own expf and logf as function kernels
// (exp_function, log_function): the probed run and the alternatives go through those kernels
// and locate the same row and rescale. (glibc's expf and logf are correctly rounded on these
// inputs, so this checks the search runs with them, not that their values matter.)
TEST(ValidateLocate, RunsWithTheKernelsOwnFunctions) {
  const ValidationResult r = locate(kWithoutRescale, "online_softmax_libm_hook_bf16");
  expect_first_differences(r, 3);
  expect_named(r, Alternative::Kind::kSlot, "rescale", "natural-shift");
}

TEST(ValidateLocate, NamesTheLseOfAKernelDescribedWithAnExactLse) {
  const ValidationResult r = locate(kExactLse);
  expect_first_differences(r, 3);
  expect_named(r, Alternative::Kind::kSlot, "lse_impl", "shift-log");
}

TEST(ValidateLocate, NamesTheKeyBlockOfAKernelDescribedWithAnother) {
  const ValidationResult r = locate(kKeyBlocksOf64);
  expect_first_differences(r, 2);
  expect_named(r, Alternative::Kind::kParameter, "tile", "64x32");
}

TEST(ValidateLocate, NamesTheRoundingOfPOfAKernelDescribedWithAnother) {
  const ValidationResult r = locate(kPTruncated);
  expect_first_differences(r, 3);
  expect_named(r, Alternative::Kind::kSite, "p_cast", "bf16:rne");
  // Truncating P loses about 1 ulp of O in most rows: the first difference is in O.
  EXPECT_EQ(r.locate->located->output, "O");
}

TEST(ValidateLocate, FindsNothingWhereTheDescriptionIsRight) {
  const ValidationResult r = locate(kDeclared);
  ASSERT_TRUE(r.bit_exact());
  ASSERT_TRUE(r.locate);
  EXPECT_TRUE(r.locate->differences.empty());
  EXPECT_FALSE(r.locate->located);
  EXPECT_TRUE(r.locate->alternatives.empty());
}

TEST(ValidateLocate, PrintsItsLinesBeforeTheResult) {
  const CommandResult run = run_simprec(
      std::string("validate --plugin ") + SIMPREC_TEST_ONLINE_SOFTMAX_PLUGIN +
      " --kernel online_softmax_bf16 " + kInputs + " --model " + kWithoutRescale + " --locate");
  EXPECT_EQ(run.exit_code, 0) << run.output;  // exploring another model
  const std::string& out = run.output;
  // One LSE value of 192 differs: the share printed says so.
  EXPECT_NE(out.find("values=192 bitwise-equal=191 (99.47917%)"), std::string::npos) << out;
  EXPECT_NE(out.find("\nlocate LSE b=0 h=0 row="), std::string::npos) << out;
  EXPECT_NE(out.find("\nlocate row b=0 h=0 row="), std::string::npos) << out;
  EXPECT_NE(out.find("\nlocate block 2 tile=2 split=0 keys=64..95 m-old=-"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\nlocate key block=0 key=0 s="), std::string::npos) << out;
  EXPECT_NE(out.find("\nlocate row-final l="), std::string::npos) << out;
  EXPECT_NE(out.find("\nlocate alternative slot=rescale strategy=natural-shift row-agrees=yes "
                     "rows-agreeing=96/96 outputs=O:96/96,LSE:96/96\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nlocate best slot=rescale strategy=natural-shift rows-agreeing=96/96\n"),
            std::string::npos)
      << out;
  EXPECT_LT(out.find("\nlocate best"), out.find("\nresult DIFFERENT"));
}

TEST(ValidateLocate, IsForAttentionKernels) {
  const CommandResult run =
      run_simprec(std::string("validate --plugin ") + SIMPREC_TEST_PLUGIN_DIR +
                  "/cpu_reference.so --kernel gemm_f32 --locate");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--locate locates the differences of attention kernels; kernel "
                            "'gemm_f32' is a matmul kernel"),
            std::string::npos)
      << run.output;
}

}  // namespace
}  // namespace simprec::testing
