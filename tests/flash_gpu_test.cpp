// Live check on a GPU (ctest label `gpu`): simprec's flash-attention kernels (plugin flash_gpu)
// against the cuda-fa2 emulation, through the same code as `simprec validate`, with the kernels'
// own exp2 taken from the plugin. Each case must be bit-identical on O and LSE (forward) or on
// dQ, dK, dV (backward, fed with the forward kernel's O and LSE). The plugin is looked for in
// $SIMPREC_FLASH_GPU_PLUGIN, else in <build>/plugins/lib/flash_gpu.so next to this test's bin/
// folder. Without the plugin or a GPU the tests are skipped (reported as skipped, not passed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "lib/validate/validation.hpp"
#include "lib/validate/validation_inputs.hpp"
#include "plugins/host/plugin.hpp"

namespace simprec {
namespace {

using validate::InputChoices;
using validate::ValidationResult;

std::filesystem::path plugin_path() {
  if (const char* env = std::getenv("SIMPREC_FLASH_GPU_PLUGIN")) return env;
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "plugins" /
         "lib" / "flash_gpu.so";
}

class FlashGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto path = plugin_path();
    if (!std::filesystem::exists(path)) {
      skip_ = "no flash_gpu plugin at " + path.string();
      return;
    }
    plugins::OpenOptions options;
    options.isolation = plugins::Isolation::kInProcess;
    plugin_ = plugins::open_plugin(path, options).release();
    // One call of the exp2 function kernel tells whether there is a device to run on.
    plugins::KernelRequest probe;
    probe.kernel = "ex2_approx_ftz_f32";
    probe.inputs.push_back(plugins::HostTensor::zeros("x", "fp32", {1}));
    try {
      plugin_->run(probe);
    } catch (const std::exception& e) {
      skip_ = std::string("flash_gpu cannot run here: ") + e.what();
    }
  }
  static void TearDownTestSuite() {
    delete plugin_;
    plugin_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  ValidationResult run(const std::string& kernel, const InputChoices& choices) {
    return validate::validate_kernel(
        *plugin_, validate::make_validation_request(plugin_->info().kernel(kernel), choices), {});
  }

  static InputChoices choices(const char* generator, int64_t d,
                              std::map<std::string, std::string> parameters = {}) {
    InputChoices c;
    c.generator = generator;
    c.dimensions = {{"B", 2}, {"H", 2}, {"Sq", 256}, {"D", d}};
    c.parameters = std::move(parameters);
    c.seed = 3;
    return c;
  }

  static void expect_bit_exact(const ValidationResult& r) {
    for (const auto& c : r.comparisons) {
      EXPECT_EQ(c.bitwise_equal, c.values)
          << r.kernel << " output " << c.name << ": max |ulp| " << c.max_abs_ulps;
    }
  }

  static inline plugins::Plugin* plugin_ = nullptr;
  static inline std::string skip_;
};

TEST_F(FlashGpu, ForwardKernelsAreBitExactWithTheirEmulation) {
  struct Case {
    const char* kernel;
    const char* generator;
    int64_t d;
    std::map<std::string, std::string> parameters;
  };
  const Case cases[] = {
      {"flash_fwd_bf16_64x64", "normal", 64, {}},
      {"flash_fwd_bf16_64x64", "repeated-max", 128, {{"causal", "true"}}},
      {"flash_fwd_bf16_128x64", "repeated-max", 128, {{"beta_rowmax", "true"}, {"beta", "2"}}},
      {"flash_fwd_bf16_128x64", "low-rank", 128, {{"sr_p_bits", "8"}, {"seed", "5"}}},
      {"flash_fwd_fp16_64x64", "peaky", 128, {{"sr_p_bits", "8"}, {"causal", "true"}}},
      {"flash_fwd_fp16_128x64", "normal", 64, {{"beta_rowmax", "true"}}},
      {"flash_fwd_e4m3_64x128", "normal", 128, {{"causal", "true"}}},
      {"flash_fwd_bf16_wg128x64",
       "repeated-max",
       128,
       {{"causal", "true"}, {"beta_rowmax", "true"}}},
      {"flash_fwd_fp16_wg128x64", "low-rank", 128, {{"sr_p_bits", "8"}, {"seed", "3"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.kernel) + " " + c.generator);
    const ValidationResult r = run(c.kernel, choices(c.generator, c.d, c.parameters));
    ASSERT_EQ(r.comparisons.size(), 2u);
    expect_bit_exact(r);
  }
}

TEST_F(FlashGpu, BackwardKernelsAreBitExactFromTheForwardKernelsOutputs) {
  for (const char* element : {"bf16", "fp16"}) {
    for (bool causal : {false, true}) {
      SCOPED_TRACE(std::string(element) + (causal ? " causal" : ""));
      const std::map<std::string, std::string> parameters = {{"causal", causal ? "1" : "0"}};
      const ValidationResult forward = run(std::string("flash_fwd_") + element + "_64x64",
                                           choices("repeated-max", 128, parameters));
      InputChoices c = choices("repeated-max", 128, parameters);
      plugins::KernelRequest request = validate::make_validation_request(
          plugin_->info().kernel(std::string("flash_bwd_") + element + "_64x64"), c);
      // The forward kernel's inputs and outputs in place of the generated ones.
      for (auto& t : request.inputs) {
        for (const auto* set : {&forward.inputs, &forward.kernel_outputs}) {
          for (const auto& f : *set) {
            if (f.name == t.name) t = f;
          }
        }
      }
      const ValidationResult r = validate::validate_kernel(*plugin_, request, {});
      ASSERT_EQ(r.comparisons.size(), 3u);
      expect_bit_exact(r);
    }
  }
}

}  // namespace
}  // namespace simprec
