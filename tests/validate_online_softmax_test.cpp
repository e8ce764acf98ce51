// A stranger's kernel said in the numerics-spec language: examples/plugin/online_softmax.c, a
// textbook online softmax (natural exp from rounded, scaled row maxima, key blocks of 32, P in
// bf16, O in bf16 and the LSE in fp32), validated bit for bit against the spec it declares on
// inputs of every kind, causal or not, lengths that 32 does not divide; and the same kernel
// against the spec without the strategies for its rescale and LSE, whose LSE then differs. Its
// variants with the C library's expf and logf: said with device_math=glibc, or handed to the
// emulation as the plugin's device-function kernels (exp_function, log_function).
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.hpp"

namespace simprec::testing {
namespace {

const std::string kValidate = std::string("validate --plugin ") +
                              SIMPREC_TEST_ONLINE_SOFTMAX_PLUGIN + " --kernel online_softmax_bf16 ";

TEST(OnlineSoftmaxPlugin, BitExactOnOAndLseAsDeclared) {
  for (const std::string inputs :
       {"--generate repeated-max --dim B=2 --dim H=1 --dim Sq=100 --dim D=64 --seed 1",
        "--generate normal --dim B=1 --dim H=1 --dim Sq=133 --dim D=64 --param causal=true --seed "
        "2",
        "--generate peaky --dim B=2 --dim Sq=150 --dim D=64 --seed 3",
        "--generate sinks --dim Sq=97 --dim D=16 --seed 4"}) {
    SCOPED_TRACE(inputs);
    const CommandResult r = run_simprec(kValidate + inputs + " --require-bit-exact");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("output LSE format=fp32"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("result PASS bit-exact as claimed"), std::string::npos) << r.output;
  }
}

TEST(OnlineSoftmaxPlugin, BitExactAgainstItsModelFile) {
  // lib/attention/models/online-softmax.toml says the same as the declared spec.
  const CommandResult r = run_simprec(
      kValidate +
      "--generate peaky --dim B=2 --dim Sq=150 --dim D=64 --seed 3 --model online-softmax "
      "--require-bit-exact");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("result PASS bit-exact"), std::string::npos) << r.output;
}

TEST(OnlineSoftmaxPlugin, TheLseNeedsTheRoundedScaledMax) {
  const CommandResult r =
      run_simprec(kValidate +
                  "--generate repeated-max --dim B=2 --dim H=2 --dim Sq=200 --dim D=64 --seed 1 "
                  "--model fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=64x32");
  EXPECT_NE(r.output.find("result DIFFERENT"), std::string::npos) << r.output;
}

std::string validate(const std::string& kernel) {
  return std::string("validate --plugin ") + SIMPREC_TEST_ONLINE_SOFTMAX_PLUGIN + " --kernel " +
         kernel + " ";
}

const char* const kRepeatedMax =
    "--generate repeated-max --dim B=2 --dim H=2 --dim Sq=200 --dim D=64 --seed 1 ";

TEST(OnlineSoftmaxPlugin, TheCLibraryKernelsAreBitExactAsDeclared) {
  for (const char* kernel : {"online_softmax_glibc_bf16", "online_softmax_libm_hook_bf16"}) {
    for (const char* inputs :
         {kRepeatedMax, "--generate normal --dim Sq=97 --dim D=16 --param causal=true --seed 2 "}) {
      SCOPED_TRACE(std::string(kernel) + " " + inputs);
      const CommandResult r = run_simprec(validate(kernel) + inputs + "--require-bit-exact");
      EXPECT_EQ(r.exit_code, 0) << r.output;
      EXPECT_NE(r.output.find("result PASS bit-exact as claimed"), std::string::npos) << r.output;
    }
  }
}

// The function kernels against device_math=glibc, bit for bit; glibc's expf is not correctly
// rounded, and validate sees it on a million arguments (604 differ on glibc 2.36).
TEST(OnlineSoftmaxPlugin, TheCLibraryFunctionKernels) {
  for (const char* kernel : {"expf_f32", "logf_f32"}) {
    const CommandResult r = run_simprec(validate(kernel) + "--dim N=1048576 --require-bit-exact");
    EXPECT_EQ(r.exit_code, 0) << kernel << r.output;
  }
  const CommandResult r =
      run_simprec(validate("expf_f32") + "--dim N=1048576 --model correctly-rounded");
  EXPECT_NE(r.output.find("result DIFFERENT"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace simprec::testing
