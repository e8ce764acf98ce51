// Plugins out of process: the runner describes and runs them with the same results as in
// process, and a plugin that crashes, hangs or is refused becomes a PluginError while the host
// carries on.
#include <gtest/gtest.h>

#include "tests/plugin_test_support.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "plugins/host/child_process.hpp"
#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {
namespace {

OpenOptions out_of_process(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  OpenOptions options;
  options.isolation = Isolation::kOutOfProcess;
  options.timeout = timeout;
  options.runner = SIMPREC_TEST_RUNNER;
  return options;
}

std::string failure(Plugin& plugin, const KernelRequest& request) {
  try {
    plugin.run(request);
  } catch (const PluginError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginRunner, DescribesLikeInProcess) {
  const auto outside = open_plugin(kPluginDir + "/cpu_reference.so", out_of_process());
  const auto inside = open_plugin(kPluginDir + "/cpu_reference.so", in_process());
  ASSERT_EQ(outside->info().kernels.size(), inside->info().kernels.size());
  EXPECT_EQ(outside->info().name, inside->info().name);
  EXPECT_EQ(outside->info().path, inside->info().path);
  for (size_t i = 0; i < inside->info().kernels.size(); ++i) {
    const auto& a = outside->info().kernels[i];
    const auto& b = inside->info().kernels[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.bit_exact, b.bit_exact);
    EXPECT_EQ(a.emulation_model, b.emulation_model);
    EXPECT_EQ(a.operands.size(), b.operands.size());
    EXPECT_EQ(a.parameters.size(), b.parameters.size());
    EXPECT_EQ(a.attributes.size(), b.attributes.size());
  }
}

TEST(PluginRunner, RunsLikeInProcess) {
  const auto outside = open_plugin(kPluginDir + "/cpu_reference.so", out_of_process());
  const auto inside = open_plugin(kPluginDir + "/cpu_reference.so", in_process());
  for (const char* kernel : {"gemm_f32", "gemm_f32_unfused"}) {
    const auto a = outside->run(small_gemm(kernel));
    const auto b = inside->run(small_gemm(kernel));
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].bytes, b[0].bytes) << kernel;
  }
  // Parameters cross the process boundary too: a causal mask changes the first row.
  KernelRequest attention;
  attention.kernel = "attention_forward_f32";
  for (const char* name : {"Q", "K", "V"}) {
    HostTensor t = HostTensor::zeros(name, "fp32", {1, 1, 2, 1});
    const float v[] = {1, 2};
    std::memcpy(t.bytes.data(), v, sizeof v);
    attention.inputs.push_back(t);
  }
  attention.parameters = {{"causal", true}, {"scale", 0.5}};
  const auto a = outside->run(attention);
  const auto b = inside->run(attention);
  EXPECT_EQ(a[0].bytes, b[0].bytes);
  float first = 0;
  std::memcpy(&first, a[0].bytes.data(), sizeof first);
  EXPECT_EQ(first, 1.0f);  // the first query sees only the first key
}

TEST(PluginRunner, ACrashIsReportedAndTheHostCarriesOn) {
  const auto plugin = open_plugin(kBrokenDir + "/broken_crashing_kernel.so", out_of_process());
  const std::string message = failure(*plugin, small_gemm("gemm"));
  EXPECT_NE(message.find("crashed with signal 11"), std::string::npos) << message;
  EXPECT_NE(message.find("running kernel 'gemm'"), std::string::npos) << message;
  // The same host goes on to use another plugin.
  const auto good = open_plugin(kPluginDir + "/cpu_reference.so", out_of_process());
  EXPECT_EQ(good->run(small_gemm("gemm_f32")).size(), 1u);
}

TEST(PluginRunner, AHangIsKilledAtTheTimeout) {
  const auto plugin = open_plugin(kBrokenDir + "/broken_hanging_kernel.so",
                                  out_of_process(std::chrono::milliseconds(300)));
  const auto start = std::chrono::steady_clock::now();
  const std::string message = failure(*plugin, small_gemm("gemm"));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_NE(message.find("did not finish running kernel 'gemm' within 0.3 s and was killed"),
            std::string::npos)
      << message;
  // Not a timing test: only that the call came back at all instead of hanging with the plugin.
  EXPECT_LT(elapsed, std::chrono::seconds(60));
}

TEST(PluginRunner, AHangWhileDescribingIsKilledToo) {
  try {
    open_plugin(kBrokenDir + "/broken_hanging_entry.so",
                out_of_process(std::chrono::milliseconds(300)));
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish describing itself within 0.3 s"),
              std::string::npos)
        << e.what();
  }
}

TEST(PluginRunner, AFailingKernelKeepsItsMessage) {
  const auto plugin = open_plugin(kBrokenDir + "/broken_failing_kernel.so", out_of_process());
  const std::string message = failure(*plugin, small_gemm("gemm"));
  EXPECT_NE(message.find("failed (device error): simulated device failure: out of memory"),
            std::string::npos)
      << message;
}

TEST(PluginRunner, RefusedPluginsAreRefusedThroughTheRunner) {
  for (const auto& [file, expected] : std::vector<std::pair<std::string, std::string>>{
           {"broken_no_entry.so", "does not export simprec_plugin_entry()"},
           {"broken_wrong_major.so", "speaks plugin ABI 2.0"},
           {"broken_unknown_kind.so", "unknown kernel kind 99"}}) {
    try {
      open_plugin(kBrokenDir + "/" + file, out_of_process());
      ADD_FAILURE() << file << " was accepted";
    } catch (const PluginError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(PluginRunner, AMissingRunnerIsAClearError) {
  OpenOptions options = out_of_process();
  options.runner = "/nonexistent/simprec-plugin-runner";
  try {
    open_plugin(kPluginDir + "/cpu_reference.so", options);
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("exited with code 127"), std::string::npos) << e.what();
  }
}

TEST(PluginRunner, FindsTheRunnerThroughTheEnvironment) {
  setenv("SIMPREC_PLUGIN_RUNNER", SIMPREC_TEST_RUNNER, 1);
  EXPECT_EQ(find_runner(), std::filesystem::path(SIMPREC_TEST_RUNNER));
  setenv("SIMPREC_PLUGIN_RUNNER", "/nonexistent/runner", 1);
  EXPECT_THROW(find_runner(), PluginError);
  unsetenv("SIMPREC_PLUGIN_RUNNER");
  EXPECT_TRUE(std::filesystem::exists(find_runner()));  // the build tree's
}

TEST(ChildProcess, ReportsExitCodesSignalsAndTimeouts) {
  const auto log = std::filesystem::temp_directory_path() / "simprec-child-process-test.log";
  EXPECT_EQ(run_child("/bin/sh", {"-c", "exit 3"}, log, std::chrono::seconds(30)).exit_code, 3);
  EXPECT_EQ(run_child("/bin/sh", {"-c", "kill -SEGV $$"}, log, std::chrono::seconds(30)).signal,
            11);
  EXPECT_TRUE(
      run_child("/bin/sh", {"-c", "sleep 100"}, log, std::chrono::milliseconds(100)).timed_out);
  EXPECT_TRUE(run_child("/bin/sh", {"-c", "true"}, log, std::chrono::seconds(30)).succeeded());
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace simprec::plugins
