// Plugins that attack the host rather than merely fail (plugins/test_plugins/broken_plugin.c),
// in process and out of process: an output declared smaller or other than its kind's shape, a
// kernel name that forges a line of `plugins list`, a kernel that calls exit(0), one that leaves
// a forked child behind, one whose message is not UTF-8. Each must end in a refusal or an error
// that says what the plugin did, with a non-zero status, never in a crash, a silent success or
// a process left running.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include "tests/plugin_test_support.hpp"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_error.hpp"
#include "tests/cli_support.hpp"

namespace simprec::plugins {
namespace {

using testing::contains;
using testing::run_simprec;

OpenOptions out_of_process() {
  OpenOptions options;
  options.runner = SIMPREC_TEST_RUNNER;
  return options;
}

std::string hostile(const std::string& variant) {
  return kBrokenDir + "/broken_" + variant + ".so";
}

// The error open_plugin gives, or "(opened)".
std::string open_error(const std::string& variant, const OpenOptions& options) {
  try {
    open_plugin(hostile(variant), options);
  } catch (const PluginError& e) {
    return e.what();
  }
  return "(opened)";
}

const char* where(const OpenOptions& options) {
  return options.isolation == Isolation::kInProcess ? "in process" : "out of process";
}

// simprec validate on a hostile plugin, in or out of process, under a time limit of its own.
testing::CommandResult validate(const std::string& variant, const std::string& arguments,
                                bool in_process_call) {
  return run_simprec("validate --timeout 20 --plugin " + hostile(variant) + " --kernel gemm " +
                     (in_process_call ? "--in-process " : "") + arguments);
}

TEST(HostilePlugin, AnOutputDeclaredAgainstItsKindIsRefused) {
  // D [M,M] where a matmul's D is [M,N]: with N > M the emulation would have written past D,
  // with N < M the padding would have compared as equal.
  for (const auto& options : {in_process(), out_of_process()}) {
    const std::string message = open_error("square_output", options);
    EXPECT_TRUE(contains(message,
                         "output 'D' is declared [M,M], but a matmul kernel's D is "
                         "[M,N]: its dimension 2 is N, which input 'B' declares as "
                         "'N', not 'M'"))
        << where(options) << ": " << message;
  }
  for (const bool in : {true, false}) {
    for (const char* dims :
         {"--dim M=8 --dim N=4096 --dim K=8", "--dim M=64 --dim N=4 --dim K=8"}) {
      const auto r = validate("square_output", dims, in);
      EXPECT_EQ(r.exit_code, 1) << dims << (in ? " in process: " : ": ") << r.output;
      EXPECT_TRUE(contains(r.output, "declared [M,M]")) << r.output;
      EXPECT_FALSE(contains(r.output, "PASS")) << r.output;
    }
  }
}

TEST(HostilePlugin, AnOutputSmallerThanItsKindIsRefusedBeforeTheCall) {
  // y [1] where a function's y is [N]: the declaration alone cannot tell (N may be 1), the call
  // can. The emulation would have written N values into one.
  for (const bool in : {true, false}) {
    const auto r = validate("short_output", "--dim N=100000", in);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output,
                         "output 'y' has shape [1] (from its declaration [1]), but a "
                         "function kernel's y is [N]: N is 100000 in input 'x'"))
        << r.output;
  }
  const auto r = validate("short_output", "--dim N=1", false);
  EXPECT_EQ(r.exit_code, 1) << r.output;  // fits; the kernel is honest, exp2 is not
  EXPECT_TRUE(contains(r.output, "output y format=fp32 shape=[1] values=1")) << r.output;
}

TEST(HostilePlugin, AKernelNameCannotForgeARecordOfPluginsList) {
  for (const auto& options : {in_process(), out_of_process()}) {
    const std::string message = open_error("newline_name", options);
    EXPECT_TRUE(contains(message, "kernel #0: name 'gemm\\nplugin forged version=6.6.6"))
        << where(options) << ": " << message;
    EXPECT_TRUE(contains(message, "control character")) << message;
  }
  for (const char* isolation : {"", "--in-process "}) {
    const auto r = run_simprec(std::string("plugins list ") + isolation + hostile("newline_name"));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_FALSE(contains(r.output, "\nplugin forged")) << r.output;
    EXPECT_FALSE(r.output.starts_with("plugin forged")) << r.output;
  }
}

TEST(HostilePlugin, AKernelThatEndsTheProcessIsReported) {
  for (const char* variant : {"exit", "quick_exit"}) {
    for (const bool in : {true, false}) {
      const auto r = validate(variant, "", in);
      EXPECT_EQ(r.exit_code, 1) << variant << (in ? " in process: " : ": ") << r.output;
      EXPECT_TRUE(contains(r.output, "broken_" + std::string(variant) +
                                         ".so ended the process (exit or quick_exit) while "
                                         "running kernel 'gemm', instead of returning"))
          << variant << (in ? " in process: " : ": ") << r.output;
    }
  }
}

// Whether process `pid` has ended (gone, or a zombie waiting for its new parent), waiting up to
// ten seconds for it.
bool ended(int pid) {
  for (int i = 0; i < 1000; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, name, state;
    if (!(stat >> pid_field >> name >> state) || state == "Z") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(HostilePlugin, AForkedChildDoesNotOutliveTheCall) {
  for (const bool in : {true, false}) {
    const std::string stem =
        ::testing::TempDir() + "hostile_child_" + std::to_string(::getpid()) + (in ? "_in" : "");
    const std::string pid_file = stem + ".pid", output_file = stem + ".txt";
    std::remove(pid_file.c_str());
    // The output goes to a file: a child left running would hold a pipe open, and reading it
    // would wait for the child's five minutes.
    const auto result = testing::run_command(
        "SIMPREC_TEST_CHILD_PID_FILE=" + pid_file + " " + SIMPREC_CLI + " validate --plugin " +
        hostile("fork") + " --kernel gemm " + (in ? "--in-process " : "") +
        "--dim M=8 --dim N=8 --dim K=8 --timeout 20 > " + output_file + " 2>&1");
    std::stringstream output;
    output << std::ifstream(output_file).rdbuf();
    EXPECT_EQ(result.exit_code, 0) << output.str();  // it claims nothing
    EXPECT_TRUE(contains(output.str(), "\nresult ")) << output.str();
    std::remove(output_file.c_str());
    int pid = 0;
    std::ifstream(pid_file) >> pid;
    ASSERT_GT(pid, 0) << "the plugin wrote no pid" << (in ? " (in process)" : "");
    const bool gone = ended(pid);
    if (!gone) ::kill(pid, SIGKILL);
    EXPECT_TRUE(gone) << "child " << pid << " outlived validate" << (in ? " in process" : "");
    std::remove(pid_file.c_str());
  }
}

TEST(HostilePlugin, AMessageThatIsNotUtf8ArrivesEscaped) {
  const std::string escaped = "device said \\xff\\xfe\\x80 then stopped";
  for (const auto& options : {in_process(), out_of_process()}) {
    const auto plugin = open_plugin(hostile("bad_utf8"), options);
    try {
      plugin->run(small_gemm("gemm"));
      ADD_FAILURE() << where(options) << ": no error";
    } catch (const PluginError& e) {
      EXPECT_TRUE(contains(e.what(), "failed (device error): " + escaped))
          << where(options) << ": " << e.what();
    }
  }
  for (const bool in : {true, false}) {
    const auto r = validate("bad_utf8", "", in);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, escaped)) << (in ? "in process: " : "") << r.output;
  }
}

}  // namespace
}  // namespace simprec::plugins

namespace simprec::plugins {
namespace {

// A FIFO where a plugin or its model is expected: dlopen, and a reader without O_NONBLOCK, would
// wait for a writer; both are refused at once, naming what the file is.
TEST(HostilePlugin, AFifoIsRefusedAsAPluginAndAsItsModel) {
  const auto dir = testing::fresh_dir("hostile_plugin_fifo");
  ASSERT_EQ(::mkfifo((dir / "fifo.so").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir / "model.toml").c_str(), 0600), 0);
  for (const char* isolation : {"", "--in-process "}) {
    const auto started = std::chrono::steady_clock::now();
    auto r = run_simprec(std::string("plugins list --timeout 20 ") + isolation +
                         (dir / "fifo.so").string());
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "fifo.so: not a regular file (a FIFO)")) << r.output;
    r = run_simprec(std::string("validate --timeout 20 ") + isolation + "--plugin " + kPluginDir +
                    "/cpu_reference.so --kernel attention_forward_f32 --model " +
                    (dir / "model.toml").string());
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "model.toml: not a regular file (a FIFO)")) << r.output;
  }
}

// A model named by the user is quoted in part, whatever its length.
TEST(HostilePlugin, AHugeModelIsQuotedInPart) {
  const std::string huge(100000, 'x');
  for (const char* kernel : {"gemm_f32", "attention_forward_f32"}) {
    for (const std::string& model : {huge, "fa2," + huge}) {
      const auto r = run_simprec("validate --in-process --plugin " + kPluginDir +
                                 "/cpu_reference.so --kernel " + kernel + " --model " + model);
      EXPECT_NE(r.exit_code, 0) << r.output.substr(0, 300);
      EXPECT_LT(r.output.size(), 5000u) << kernel << ": " << r.output.substr(0, 300);
    }
  }
}

}  // namespace
}  // namespace simprec::plugins
