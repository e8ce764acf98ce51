// In process, a plugin that hangs past the timeout is abandoned on its thread: the host gets an
// AbandonedCallError instead of hanging with it, the plugin refuses every later call, and the
// command line reports the timeout and exits 1 (docs/plugins.md).
#include <gtest/gtest.h>

#include "tests/plugin_test_support.hpp"

#include <chrono>
#include <cstring>
#include <string>

#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_error.hpp"
#include "tests/cli_support.hpp"

namespace simprec::plugins {
namespace {

OpenOptions in_process_within(std::chrono::milliseconds timeout) {
  OpenOptions options = in_process();
  options.timeout = timeout;
  return options;
}

TEST(InProcessTimeout, AHangingKernelIsAbandonedAndThePluginRefusesLaterCalls) {
  const auto plugin = open_plugin(kBrokenDir + "/broken_hanging_kernel.so",
                                  in_process_within(std::chrono::milliseconds(300)));
  const auto start = std::chrono::steady_clock::now();
  try {
    plugin->run(small_gemm("gemm"));
    FAIL() << "the hanging kernel returned";
  } catch (const AbandonedCallError& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish running kernel 'gemm' within 0.3 s; it "
                                         "runs in this process, where it cannot be stopped"),
              std::string::npos)
        << e.what();
  }
  // Not a timing test: only that the call came back at all instead of hanging with the plugin.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  try {
    plugin->run(small_gemm("gemm"));
    FAIL() << "a plugin with an abandoned call was used again";
  } catch (const AbandonedCallError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be used: it is still running kernel 'gemm'"),
              std::string::npos)
        << e.what();
  }
}

TEST(InProcessTimeout, AHangingEntryFunctionIsAbandonedToo) {
  try {
    open_plugin(kBrokenDir + "/broken_hanging_entry.so",
                in_process_within(std::chrono::milliseconds(300)));
    FAIL() << "the hanging entry function returned";
  } catch (const AbandonedCallError& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish loading within 0.3 s"), std::string::npos)
        << e.what();
  }
}

TEST(InProcessTimeout, CallsWithinTheTimeoutWorkAndKeepTheirErrors) {
  const auto options = in_process_within(std::chrono::seconds(60));
  const auto good = open_plugin(kPluginDir + "/cpu_reference.so", options);
  const auto outputs = good->run(small_gemm("gemm_f32"));
  ASSERT_EQ(outputs.size(), 1u);
  float d[4];
  std::memcpy(d, outputs[0].bytes.data(), sizeof d);
  // [[1,2],[3,4]] * [[0.5,-1],[2,0.25]], every value exact in float.
  EXPECT_EQ(d[0], 4.5f);
  EXPECT_EQ(d[1], -0.5f);
  EXPECT_EQ(d[2], 9.5f);
  EXPECT_EQ(d[3], -2.0f);
  const auto failing = open_plugin(kBrokenDir + "/broken_failing_kernel.so", options);
  try {
    failing->run(small_gemm("gemm"));
    FAIL() << "the failing kernel succeeded";
  } catch (const AbandonedCallError& e) {
    FAIL() << "a failure within the timeout was taken for a timeout: " << e.what();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("simulated device failure"), std::string::npos)
        << e.what();
  }
}

TEST(InProcessTimeout, TheCommandLineReportsTheTimeoutAndExits1) {
  const auto run = testing::run_simprec("validate --in-process --timeout 0.3 --plugin " +
                                        kBrokenDir + "/broken_hanging_kernel.so --kernel gemm");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("simprec: error: plugin " + kBrokenDir +
                            "/broken_hanging_kernel.so did not finish running kernel 'gemm' "
                            "within 0.3 s; it runs in this process, where it cannot be stopped"),
            std::string::npos)
      << run.output;
  const auto list = testing::run_simprec("plugins list --in-process --timeout 0.3 " + kBrokenDir +
                                         "/broken_hanging_entry.so");
  EXPECT_EQ(list.exit_code, 1) << list.output;
  EXPECT_NE(list.output.find("did not finish loading within 0.3 s"), std::string::npos)
      << list.output;
}

}  // namespace
}  // namespace simprec::plugins
