// Thread counts from the command line: --threads and -j beyond the bound (emulation/parallel.hpp,
// kMaxThreads) are refused with the value and the range, before the OpenMP runtime sees them
// (asked for 100000 threads it ended the process). OMP_NUM_THREADS beyond the bound is clamped
// (parallel_test@OMP_NUM_THREADS=100000).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli_support.hpp"

namespace simprec::testing {
namespace {

TEST(ThreadOptions, CountsBeyondTheBoundAreRefused) {
  const auto dir = fresh_dir("cli_threads");
  // Options are read before the experiment file, so that `run` refuses before it looks for it.
  const std::string experiment = (dir / "never_read.toml").string();
  const std::string attention =
      "attention --generate normal --shape 1,2,16,8 --out " + (dir / "a").string();
  for (const std::string value : {"100000", "1025", "-1", "4294967297", "x", ""}) {
    const std::string range = "' is not an integer in [0, 1024] (0: every core)";
    const std::string expected = "--threads '" + value + range;
    for (const std::string& command : std::vector<std::string>{
             attention + " --threads '" + value + "'",
             "run " + experiment + " -j '" + value + "' --quiet --out " + (dir / "r").string(),
             "mma --model tc:sm90-mma-bf16 --threads '" + value + "'"}) {
      const auto r = run_simprec(command);
      EXPECT_EQ(r.exit_code, 2) << command << ": " << r.output;
      EXPECT_TRUE(contains(r.output, expected)) << command << ": " << r.output;
    }
  }
  const auto r = run_simprec(attention + " --threads 1024");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace simprec::testing
