// Names that name nothing (issue 33): a mistyped command, option or numerics spec item is answered
// with the known names it is close to, or with the list of them where none is close; usage errors
// exit 2. The spec's items are checked in one place (lib/attention/numerics_spec.cpp and the
// parsers it calls), so `simprec numerics` stands here for attention, validate and experiment
// files alike.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.hpp"

namespace {

using simprec::testing::contains;
using simprec::testing::run_simprec;

TEST(CliHints, AMistypedCommandIsNamedWithTheCloseOne) {
  const auto r = run_simprec("atention --generate normal --shape 1,1,8,8 --out /nonexistent");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "simprec: error: unknown command 'atention'; did you mean 'attention'?\n");
}

TEST(CliHints, ACommandCloseToNoneListsTheCommands) {
  const auto r = run_simprec("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "simprec: error: unknown command 'frobnicate' (commands: "))
      << r.output;
  for (const char* command : {"attention", "numerics", "validate", "discover", "run", "plugins"}) {
    EXPECT_TRUE(contains(r.output, command)) << command << " in " << r.output;
  }
}

TEST(CliHints, ASubcommandOfACommandIsNamedToo) {
  const auto r = run_simprec("plugins lst");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "simprec plugins: error: unknown command 'lst'; did you mean 'list'?\n");
}

TEST(CliHints, AMistypedOptionIsNamedWithTheCloseOne) {
  const auto r = run_simprec("attention --generate normal --shape 1,1,8,8 --formt fp16 --out x");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "simprec attention: error: unknown option '--formt'; did you mean '--format'?\n");
  // --opt=value is the option --opt.
  const auto e = run_simprec("numerics fa2 --jsn=1");
  EXPECT_EQ(e.exit_code, 2) << e.output;
  EXPECT_TRUE(contains(e.output, "unknown option '--jsn'; did you mean '--json'?")) << e.output;
}

TEST(CliHints, AnOptionCloseToNoneKeepsCLI11sMessage) {
  const auto r = run_simprec("numerics fa2 --zzzzzzzz");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "The following argument was not expected: --zzzzzzzz"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "did you mean")) << r.output;
}

TEST(CliHints, HelpAndVersionAreUnchanged) {
  EXPECT_EQ(run_simprec("--version").exit_code, 0);
  const auto r = run_simprec("attention --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "--quiet")) << r.output;
}

struct SpecCase {
  std::string spec;
  std::string expected;
};

TEST(CliHints, NumericsSpecItemsGetTheCloseNames) {
  const SpecCase cases[] = {
      {"fa2,p_cast=bf16:rnee", "unknown rounding mode 'rnee'; did you mean 'rne'?"},
      {"fa3", "unknown preset 'fa3'; did you mean 'fa2' or 'fa3-fp8'?"},
      {"torch-math,out_format=bf16",
       "unknown site or option 'out_format'; did you mean 'o_out' or 'grad_out'?"},
      {"fa2,p_cats=bf16:rne", "unknown site or option 'p_cats'; did you mean 'p_cast'?"},
      {"fa2,algorithm=flsh", "unknown algorithm 'flsh'; did you mean 'flash'?"},
      {"fa2,k_smooth=onn", "unknown k_smooth 'onn'; did you mean 'on'?"},
      {"fa2,p_cast=bf61:rne", "unknown format 'bf61'; did you mean 'bf16'?"},
      {"fa2,beta-rowmx:2", "unknown mitigation 'beta-rowmx:2'; did you mean 'beta-rowmax'?"},
  };
  for (const auto& c : cases) {
    const auto r = run_simprec("numerics '" + c.spec + "'");
    EXPECT_EQ(r.exit_code, 2) << c.spec << ": " << r.output;
    EXPECT_TRUE(contains(r.output, c.expected)) << c.spec << ": " << r.output;
    // The known names are still listed after the hint.
    EXPECT_TRUE(contains(r.output, "known") || contains(r.output, "expected one of") ||
                contains(r.output, "sites:"))
        << c.spec << ": " << r.output;
  }
}

TEST(CliHints, AMistypedGeneratorIsNamedWithTheCloseOne) {
  const auto r = run_simprec("attention --generate normall --shape 1,1,8,8 --out " +
                             ::testing::TempDir() + "simprec_hints_generator");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(
      contains(r.output, "unknown input generator 'normall'; did you mean 'normal'? (known: "))
      << r.output;
}

TEST(CliHints, ASpecItemCloseToNoneGetsNoHint) {
  const auto r = run_simprec("numerics 'fa2,p_cast=bf16:qqqqqq'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown rounding mode 'qqqqqq': expected one of")) << r.output;
  EXPECT_FALSE(contains(r.output, "did you mean")) << r.output;
}

TEST(CliHints, TheHintQuotesABoundedExcerpt) {
  // A 5000-character word close to nothing: quoted in part, as every message quotes input.
  const std::string word(5000, 'x');
  const auto r = run_simprec("'" + word + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "unknown command 'xxxx")) << r.output.substr(0, 200);
  EXPECT_LT(r.output.size(), 400u);
}

}  // namespace
