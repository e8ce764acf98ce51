// A kernel that writes past the end of an output is reported as an overrun of that output,
// naming it and the kernel, in process and out of process, never as heap corruption. The
// test plugins broken_overrun_N write N bytes after the end of D. Outputs end at a 256-byte
// boundary followed by a guard page: within the canary bytes up to the boundary the overrun is
// found after the call; beyond them the guard page stops the kernel at its first byte.
#include <gtest/gtest.h>

#include "tests/plugin_test_support.hpp"

#include <cstring>
#include <string>

#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_error.hpp"
#include "tests/cli_support.hpp"

namespace simprec::plugins {
namespace {

OpenOptions out_of_process() {
  OpenOptions options;
  options.runner = SIMPREC_TEST_RUNNER;
  return options;
}

// D = A·B of shape [m, n] in fp32: m·n·4 bytes.
KernelRequest gemm_with_output(int64_t m, int64_t n) {
  KernelRequest request;
  request.kernel = "gemm";
  HostTensor a = HostTensor::zeros("A", "fp32", {m, 2});
  HostTensor b = HostTensor::zeros("B", "fp32", {2, n});
  std::vector<float> ones(static_cast<size_t>(2 * std::max(m, n)), 1.0f);
  std::memcpy(a.bytes.data(), ones.data(), a.bytes.size());
  std::memcpy(b.bytes.data(), ones.data(), b.bytes.size());
  request.inputs = {a, b};
  return request;
}

std::string failure(const OpenOptions& options, int bytes_past, int64_t m, int64_t n) {
  const auto plugin =
      open_plugin(kBrokenDir + "/broken_overrun_" + std::to_string(bytes_past) + ".so", options);
  try {
    plugin->run(gemm_with_output(m, n));
  } catch (const PluginError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string overrun_of_d(const std::string& shape, int64_t bytes) {
  return "plugin 'broken' kernel 'gemm' wrote past the end of its output 'D' (fp32 " + shape +
         ", " + std::to_string(bytes) + " bytes): ";
}

TEST(OutputOverrun, WithinTheCanaryBytesItIsFoundAfterTheCall) {
  // D [3,5] holds 60 bytes; 196 canary bytes follow up to the 256-byte boundary.
  for (const auto& options : {in_process(), out_of_process()}) {
    for (const int past : {2, 8, 32, 128}) {
      const std::string expected = overrun_of_d("[3,5]", 60) + "it changed bytes as far as " +
                                   std::to_string(past) + " past the end";
      const std::string message = failure(options, past, 3, 5);
      EXPECT_NE(message.find(expected), std::string::npos)
          << (options.isolation == Isolation::kInProcess ? "in" : "out of") << " process, " << past
          << " bytes: " << message;
    }
  }
}

TEST(OutputOverrun, BeyondThemTheGuardPageStopsTheKernelOutOfProcess) {
  // D [8,8] holds 256 bytes: no canary, every overrun faults on its first byte. D [7,8] holds
  // 224: 32 canary bytes, so 32 bytes past are found after the call and 128 at offset +32.
  for (const int past : {2, 8, 32, 128}) {
    EXPECT_NE(failure(out_of_process(), past, 8, 8)
                  .find(overrun_of_d("[8,8]", 256) +
                        "it wrote to offset +0 past the end (a guard page stopped it)"),
              std::string::npos)
        << past;
  }
  EXPECT_NE(failure(out_of_process(), 32, 7, 8)
                .find(overrun_of_d("[7,8]", 224) + "it changed bytes as far as 32 past the end"),
            std::string::npos);
  EXPECT_NE(failure(out_of_process(), 128, 7, 8)
                .find(overrun_of_d("[7,8]", 224) +
                      "it wrote to offset +32 past the end (a guard page stopped it)"),
            std::string::npos);
}

TEST(OutputOverrunDeathTest, InProcessTheGuardPageEndsTheProcessWithTheReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const int past : {2, 128}) {
    EXPECT_EXIT(failure(in_process(), past, 8, 8), ::testing::ExitedWithCode(1),
                "simprec: error: plugin 'broken' kernel 'gemm' wrote past the end of its output "
                "'D' \\(fp32 \\[8,8\\], 256 bytes\\): it wrote to offset \\+0 past the end \\(a "
                "guard page stopped it\\)")
        << past;
  }
}

TEST(OutputOverrun, AnHonestKernelFillsItsOutputToTheLastByte) {
  // The unfused GEMM of the wrong-claim plugin writes D in full and no further: every element
  // arrives, for an output ending exactly at the guard page and for one followed by canaries.
  for (const auto& options : {in_process(), out_of_process()}) {
    const auto plugin = open_plugin(kBrokenDir + "/broken_wrong_claim.so", options);
    for (const auto& [m, n] : {std::pair<int64_t, int64_t>{8, 8}, {3, 5}}) {
      const auto outputs = plugin->run(gemm_with_output(m, n));
      ASSERT_EQ(outputs.size(), 1u);
      std::vector<float> d(static_cast<size_t>(m * n));
      std::memcpy(d.data(), outputs[0].bytes.data(), outputs[0].bytes.size());
      for (const float x : d) EXPECT_EQ(x, 2.0f);  // each row of ones times a column of ones
    }
  }
}

TEST(OutputOverrun, TheCommandLineNamesTheOutputAndNeverAbortsInGlibc) {
  for (const std::string isolation : {"", "--in-process "}) {
    for (const int past : {2, 8, 32, 128}) {
      for (const std::string dims : {"--dim M=3 --dim N=5", "--dim M=8 --dim N=8"}) {
        const auto run = testing::run_simprec("validate " + isolation + "--plugin " + kBrokenDir +
                                              "/broken_overrun_" + std::to_string(past) +
                                              ".so --kernel gemm --dim K=2 " + dims);
        EXPECT_EQ(run.exit_code, 1) << run.output;
        EXPECT_NE(run.output.find("simprec: error: plugin 'broken' kernel 'gemm' wrote past the "
                                  "end of its output 'D'"),
                  std::string::npos)
            << run.output;
        EXPECT_EQ(run.output.find("free"), std::string::npos) << run.output;
        EXPECT_EQ(run.output.find("corruption"), std::string::npos) << run.output;
      }
    }
  }
}

}  // namespace
}  // namespace simprec::plugins
