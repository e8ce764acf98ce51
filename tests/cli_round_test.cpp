// The `simprec round` and `simprec formats` commands: output format and error handling.
#include <gtest/gtest.h>

#include "tests/cli_support.hpp"

namespace {

using simprec::testing::run_simprec;

TEST(CliRound, PrintsEncodingAndExactValuePerLine) {
  // Expected values worked out by hand: 0.1 lies between bf16 0x3dcc (0.099609375) and 0x3dcd
  // (0.10009765625) and is nearer the latter; the paper-A value -4.703990459442139 rounds to
  // -4.71875 (docs/numerics.md §2); 0x1.8p-3 is exactly 0.1875.
  const auto r = run_simprec("round --format bf16 --rounding rne",
                             "0.1\n-4.703990459442139\n0x1.8p-3\n-0\ninf\nnan\n");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output,
            "0x3dcd 0.10009765625\n0xc097 -4.71875\n0x3e40 0.1875\n0x8000 -0\n0x7f80 inf\n"
            "0x7fc0 nan\n");
}

TEST(CliRound, WidthOfHexFollowsFormat) {
  EXPECT_EQ(run_simprec("round -f e4m3fn -r rne", "448\n").output, "0x7e 448\n");
  EXPECT_EQ(run_simprec("round -f tf32 -r rne", "1\n").output, "0x1fc00 1\n");
  // 0x3dcccccc is exactly 0.0999999940395355224609375; printed as the shortest double that reads
  // back to it.
  EXPECT_EQ(run_simprec("round -f fp32 -r rtz", "0.1\n").output,
            "0x3dcccccc 0.09999999403953552\n");
}

TEST(CliRound, OverflowPolicyAndLongNames) {
  // 465 is past the e4m3fn overflow threshold 464 (448 + half an ulp of 32).
  EXPECT_EQ(run_simprec("round -f e4m3fn -r nearest-even", "465\n").output, "0x7f nan\n");
  EXPECT_EQ(run_simprec("round -f e4m3fn -r rne --overflow saturate", "465\n").output,
            "0x7e 448\n");
  EXPECT_EQ(run_simprec("round -f fp16 -r toward-zero", "1e6\n").output, "0x7bff 65504\n");
}

TEST(CliRound, NoSubnormalsFlushes) {
  // fp16's smallest subnormal is 2^-24; with subnormals flushed it becomes +0.
  EXPECT_EQ(run_simprec("round -f fp16 -r rne --no-subnormals", "0x1p-24\n").output, "0x0000 0\n");
  EXPECT_EQ(run_simprec("round -f fp16 -r rne", "0x1p-24\n").output,
            "0x0001 5.960464477539063e-08\n");
}

TEST(CliRound, StochasticIsReproducibleForASeed) {
  const std::string input = "0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n";
  const auto a = run_simprec("round -f bf16 -r sr --seed 5", input);
  const auto b = run_simprec("round -f bf16 -r sr --seed 5", input);
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.output, b.output);
}

TEST(CliRound, UnparsableLineIsNamed) {
  const auto r = run_simprec("round -f fp16 -r rne", "1\n2\nabc\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("line 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'abc'"), std::string::npos) << r.output;
}

TEST(CliRound, BadOptionsAreRejected) {
  for (const char* args :
       {"round -f bf17 -r rne", "round -f bf16 -r nearest", "round -f bf16 -r sr --sr-bits 33",
        "round -f e4m3fn -r rne --overflow inf", "round -f e12m3 -r rne",
        "round -f bf16 -r rne --overflow sometimes"}) {
    const auto r = run_simprec(args, "1\n");
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find("error"), std::string::npos) << args << ": " << r.output;
  }
}

TEST(CliFormats, ListsSpecLimits) {
  const auto r = run_simprec("formats");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* needle : {"e4m3fn", "448", "57344", "65504", "e4m3fnuz", "240"}) {
    EXPECT_NE(r.output.find(needle), std::string::npos) << needle;
  }
  EXPECT_NE(run_simprec("formats nonsense").exit_code, 0);
}

}  // namespace
