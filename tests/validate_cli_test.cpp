// The command line: `simprec plugins list` and `simprec validate` exit codes and output
// records (the formats docs/plugins.md documents).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

const std::string kPluginDir = SIMPREC_TEST_PLUGIN_DIR;
const std::string kBrokenDir = SIMPREC_TEST_BROKEN_PLUGIN_DIR;
// The plugin directory may also hold the GPU probe where CUDA is built: name the file.
const std::string kCpuPlugin = kPluginDir + "/cpu_reference.so";

struct CliRun {
  int exit_code;
  std::string output;  // stdout and stderr
};

CliRun simprec(const std::string& arguments, const std::string& environment = "") {
  const std::string command = environment + " " + SIMPREC_CLI + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  CliRun run{-1, ""};
  std::array<char, 4096> buffer;
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    run.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

bool has_line(const std::string& output, const std::string& line) {
  return ("\n" + output).find("\n" + line + "\n") != std::string::npos;
}

TEST(PluginsListCommand, ListsKernelsInTheDocumentedFormat) {
  const CliRun run = simprec("plugins list " + kCpuPlugin);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(has_line(run.output, "plugin cpu_reference version=1.0.0 abi=1.0 path=" + kPluginDir +
                                       "/cpu_reference.so"))
      << run.output;
  EXPECT_TRUE(has_line(run.output, "  kernel gemm_f32 kind=matmul model=sequential bit-exact=yes"))
      << run.output;
  EXPECT_TRUE(has_line(run.output, "    input A formats=fp32,bf16,fp16 shape=[M,K]")) << run.output;
  EXPECT_TRUE(has_line(run.output, "    input C formats=fp32 shape=[M,N] optional")) << run.output;
  EXPECT_TRUE(has_line(run.output, "    dimension M min=1 max=4096 multiple-of=1")) << run.output;
  EXPECT_TRUE(has_line(run.output, "    attribute accumulator_format=fp32")) << run.output;
  EXPECT_TRUE(
      has_line(run.output,
               "    parameter causal type=bool optional default=false -- mask keys after the query "
               "(bottom-right aligned)"))
      << run.output;
}

TEST(PluginsListCommand, UsesThePluginPathAndJson) {
  const CliRun run = simprec("plugins list --json", "SIMPREC_PLUGIN_PATH=" + kCpuPlugin);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("\"name\": \"cpu_reference\""), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\"bit_exact\": true"), std::string::npos) << run.output;
}

TEST(PluginsListCommand, ListsTheBuiltInPluginsWithNoArgument) {
  // simprec run from its build tree: the build's plugins are the built-in ones.
  const CliRun run = simprec("plugins list", "SIMPREC_PLUGIN_PATH=");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("plugin cpu_reference version=1.0.0 abi=1.0 path=" + kPluginDir +
                            "/cpu_reference.so"),
            std::string::npos)
      << run.output;
  // A built-in plugin found by name, with nothing on SIMPREC_PLUGIN_PATH.
  const CliRun by_name =
      simprec("validate --plugin cpu_reference --kernel gemm_f32 --format A=bf16 --format B=bf16",
              "SIMPREC_PLUGIN_PATH=");
  EXPECT_EQ(by_name.exit_code, 0) << by_name.output;
}

TEST(PluginsListCommand, ReportsBrokenPluginsAndStillListsTheRest) {
  const CliRun run = simprec("plugins list --timeout 1 " + kBrokenDir + " --plugin " + kCpuPlugin);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("plugin cpu_reference "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("broken_wrong_major.so: speaks plugin ABI 2.0"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("broken_hanging_entry.so did not finish describing itself within 1 s"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("simprec: error: 10 of 24 plugins could not be listed"),
            std::string::npos)
      << run.output;
}

TEST(ValidateCommand, PassesAnHonestClaim) {
  const CliRun run = simprec(
      "validate --plugin cpu_reference --kernel gemm_f32 --format A=bf16 --format B=bf16 --dim "
      "K=100",
      "SIMPREC_PLUGIN_PATH=" + kPluginDir);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(has_line(run.output, "input A format=bf16 shape=[64,100]")) << run.output;
  EXPECT_TRUE(has_line(run.output, "  ulp 0                4096")) << run.output;
  EXPECT_TRUE(has_line(run.output, "result PASS bit-exact as claimed")) << run.output;
}

TEST(ValidateCommand, FailsAWrongClaim) {
  const CliRun run = simprec("validate --plugin " + kBrokenDir +
                             "/broken_wrong_claim.so --kernel gemm --dim K=256");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("result FAIL"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("is not bit-exact with model 'sequential' as it claims"),
            std::string::npos)
      << run.output;
}

TEST(ValidateCommand, ReportsDifferencesOfAnUnclaimedKernelWithoutFailing) {
  const CliRun run = simprec("validate --plugin " + kPluginDir +
                             "/cpu_reference.so --kernel gemm_f32_unfused --dim K=256");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("result DIFFERENT"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("mean-signed-ulp"), std::string::npos) << run.output;
}

TEST(ValidateCommand, SurvivesCrashesAndHangs) {
  const CliRun crash =
      simprec("validate --plugin " + kBrokenDir + "/broken_crashing_kernel.so --kernel gemm");
  EXPECT_EQ(crash.exit_code, 1) << crash.output;
  EXPECT_NE(crash.output.find("crashed with signal 11"), std::string::npos) << crash.output;
  const CliRun hang = simprec("validate --plugin " + kBrokenDir +
                              "/broken_hanging_kernel.so --kernel gemm --timeout 0.2");
  EXPECT_EQ(hang.exit_code, 1) << hang.output;
  EXPECT_NE(hang.output.find("was killed"), std::string::npos) << hang.output;
}

TEST(ValidateCommand, WorkBeyondTheMemoryBoundIsRefusedBeforeAllocating) {
  // 3 x 10^10 elements of operands: refused with the estimate, nothing allocated.
  const CliRun run = simprec("validate --plugin " + kPluginDir +
                             "/cpu_reference.so --kernel gemm_f32 --dim M=100000 --dim N=100000 "
                             "--dim K=100000 --max-memory 1G");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("validating kernel 'gemm_f32' needs an estimated"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("--max-memory 1G"), std::string::npos) << run.output;
}

TEST(ValidateCommand, BadRequestsAreUsageErrors) {
  const std::string plugin = "--plugin " + kPluginDir + "/cpu_reference.so ";
  for (const std::string& arguments :
       {plugin + "--kernel gemm_f32 --dim Q=3", plugin + "--kernel gemm_f32 --format A=e4m3fn",
        plugin + "--kernel gemm_f32 --dim M=x", plugin + "--kernel gemm_f32 --param tile=3",
        plugin + "--kernel attention_forward_f32", std::string("--plugin nowhere --kernel k")}) {
    const CliRun run = simprec("validate " + arguments);
    EXPECT_EQ(run.exit_code, 2) << arguments << "\n" << run.output;
    EXPECT_NE(run.output.find("simprec: error: "), std::string::npos) << run.output;
  }
  const CliRun unknown_kernel = simprec("validate " + plugin + "--kernel nope");
  EXPECT_EQ(unknown_kernel.exit_code, 1) << unknown_kernel.output;
  EXPECT_NE(unknown_kernel.output.find("it offers: gemm_f32, gemm_f32_unfused"), std::string::npos)
      << unknown_kernel.output;
}

TEST(ValidateCommand, AttentionKernelsWithGeneratedInputsSavedAsNpy) {
  const std::string dir =
      ::testing::TempDir() + "simprec_validate_save_" + std::to_string(getpid());
  const std::string common =
      "validate --plugin " + kCpuPlugin + " --kernel attention_forward_f32 --model cuda-fa2 ";
  const CliRun run = simprec(common +
                             "--generate low-rank --dim B=1 --dim H=2 --dim Sq=64 "
                             "--dim D=32 --save " +
                             dir);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(has_line(run.output, "input Q format=fp32 shape=[1,2,64,32]")) << run.output;
  EXPECT_TRUE(has_line(run.output, "input V format=fp32 shape=[1,2,64,32]")) << run.output;
  size_t references = 0;
  for (size_t at = run.output.find("\n  reference kernel-mean-signed-error ");
       at != std::string::npos;
       at = run.output.find("\n  reference kernel-mean-signed-error ", at + 1)) {
    ++references;
  }
  EXPECT_EQ(references, 2u) << run.output;  // O and LSE
  EXPECT_NE(run.output.find(" emulation-mean-signed-error "), std::string::npos) << run.output;
  for (const char* file : {"Q.npy", "K.npy", "V.npy", "O.kernel.npy", "O.emulated.npy",
                           "LSE.kernel.npy", "LSE.emulated.npy"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + file)) << file;
  }
  // The saved inputs reproduce the run.
  const CliRun again = simprec(common + "--input Q=" + dir + "/Q.npy --input K=" + dir +
                               "/K.npy --input V=" + dir + "/V.npy");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  const auto outputs = [](const std::string& text) { return text.substr(text.find("output O")); };
  EXPECT_EQ(outputs(again.output), outputs(run.output));
  std::filesystem::remove_all(dir);
}

TEST(ValidateCommand, GenerateIsForAttentionKernels) {
  const std::string plugin = "validate --plugin " + kCpuPlugin;
  const CliRun gemm = simprec(plugin + " --kernel gemm_f32 --generate normal");
  EXPECT_EQ(gemm.exit_code, 2) << gemm.output;
  EXPECT_NE(gemm.output.find("--generate normal makes attention inputs; kernel 'gemm_f32' is a "
                             "matmul kernel"),
            std::string::npos)
      << gemm.output;
  const CliRun unknown =
      simprec(plugin + " --kernel attention_forward_f32 --model cuda-fa2 --generate uniform");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown --generate 'uniform' (known: normal"), std::string::npos)
      << unknown.output;
  const CliRun not_a_preset =
      simprec(plugin + " --kernel attention_forward_f32 --model sequential --generate normal");
  EXPECT_EQ(not_a_preset.exit_code, 2) << not_a_preset.output;
  EXPECT_NE(not_a_preset.output.find("model 'sequential': unknown preset 'sequential'"),
            std::string::npos)
      << not_a_preset.output;
}

}  // namespace

namespace {

TEST(ExamplePlugin, ItsBitExactClaimHoldsForBothOutputFormats) {
  for (const char* format : {"fp32", "bf16"}) {
    const CliRun run =
        simprec(std::string("validate --plugin ") + SIMPREC_TEST_EXAMPLE_PLUGIN +
                " --kernel gemm_bf16 --dim K=500 --low -10 --high 10 --format D=" + format);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(has_line(run.output, "result PASS bit-exact as claimed")) << run.output;
  }
}

}  // namespace
