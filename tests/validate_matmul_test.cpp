// simprec validate's machinery on matmul kernels of the CPU plugins: an honest bit-exact claim
// passes for every input format, a wrong one fails, and the comparison statistics are right.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "lib/npy/npy.hpp"
#include "lib/validate/output_comparison.hpp"
#include "lib/validate/validation.hpp"
#include "lib/validate/validation_inputs.hpp"
#include "plugins/host/plugin.hpp"

namespace simprec::validate {
namespace {

const std::string kPluginDir = SIMPREC_TEST_PLUGIN_DIR;
const std::string kBrokenDir = SIMPREC_TEST_BROKEN_PLUGIN_DIR;

plugins::OpenOptions in_process() {
  plugins::OpenOptions options;
  options.isolation = plugins::Isolation::kInProcess;
  return options;
}

std::unique_ptr<plugins::Plugin> open(const std::string& path) {
  return plugins::open_plugin(path, in_process());
}

ValidationResult run(plugins::Plugin& plugin, const std::string& kernel,
                     const InputChoices& choices, const ValidationOptions& options = {}) {
  const auto request = make_validation_request(plugin.info().kernel(kernel), choices);
  return validate_kernel(plugin, request, options);
}

TEST(ValidateMatmul, HonestBitExactClaimsPassInEveryInputFormat) {
  const auto plugin = open(kPluginDir + "/cpu_reference.so");
  for (const char* format : {"fp32", "bf16", "fp16"}) {
    for (uint64_t seed : {1, 2, 3}) {
      InputChoices choices;
      choices.formats = {{"A", format}, {"B", format}};
      choices.dimensions = {{"M", 17}, {"N", 9}, {"K", 300}};
      choices.seed = seed;
      const auto result = run(*plugin, "gemm_f32", choices);
      EXPECT_TRUE(result.enforced);
      EXPECT_TRUE(result.bit_exact()) << format << " seed " << seed;
      EXPECT_TRUE(result.passed());
      ASSERT_EQ(result.comparisons.size(), 1u);
      EXPECT_EQ(result.comparisons[0].values, 17 * 9);
    }
  }
  InputChoices choices;
  choices.omitted = {"C"};
  EXPECT_TRUE(run(*plugin, "gemm_f64", choices).passed());
}

TEST(ValidateMatmul, LargeMagnitudesAndCancellationStayBitExact) {
  // Wide ranges make cancellation and many rounding boundaries likely.
  const auto plugin = open(kPluginDir + "/cpu_reference.so");
  InputChoices choices;
  choices.low = -1e4;
  choices.high = 1e4;
  choices.dimensions = {{"M", 8}, {"N", 8}, {"K", 1000}};
  EXPECT_TRUE(run(*plugin, "gemm_f32", choices).bit_exact());
}

TEST(ValidateMatmul, AnUnfusedKernelDiffersButClaimsNothing) {
  const auto plugin = open(kPluginDir + "/cpu_reference.so");
  InputChoices choices;
  choices.dimensions = {{"K", 256}};
  const auto result = run(*plugin, "gemm_f32_unfused", choices);
  EXPECT_FALSE(result.bit_exact());
  EXPECT_FALSE(result.enforced);
  EXPECT_TRUE(result.passed());
}

TEST(ValidateMatmul, AWrongBitExactClaimFails) {
  const auto plugin = open(kBrokenDir + "/broken_wrong_claim.so");
  InputChoices choices;
  choices.dimensions = {{"K", 256}};
  const auto result = run(*plugin, "gemm", choices);
  EXPECT_TRUE(result.claims_bit_exact);
  EXPECT_FALSE(result.bit_exact());
  EXPECT_FALSE(result.passed());
  EXPECT_GT(result.comparisons[0].values - result.comparisons[0].bitwise_equal, 0);
}

TEST(ValidateMatmul, AnotherModelIsExplorationUnlessRequired) {
  const auto plugin = open(kPluginDir + "/cpu_reference.so");
  InputChoices choices;
  choices.dimensions = {{"K", 512}};
  const auto explored = run(*plugin, "gemm_f32", choices, {"pairwise", false});
  EXPECT_EQ(explored.model, "pairwise");
  EXPECT_FALSE(explored.bit_exact());
  EXPECT_TRUE(explored.passed());
  EXPECT_FALSE(run(*plugin, "gemm_f32", choices, {"pairwise", true}).passed());
  EXPECT_THROW(run(*plugin, "gemm_f32", choices, {"no-such-model", false}), std::invalid_argument);
}

TEST(ValidateMatmul, KernelsWithoutAModelAreRefusedBeforeRunning) {
  const auto plugin = open(kPluginDir + "/cpu_reference.so");
  try {
    run(*plugin, "attention_forward_f32", {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("names no emulation model; pass --model"),
              std::string::npos);
  }
}

TEST(ValidateMatmul, InputsComeFromNpyFiles) {
  const auto plugin = open(kPluginDir + "/cpu_reference.so");
  const auto dir = std::filesystem::temp_directory_path() / "simprec-validate-npy-test";
  std::filesystem::create_directories(dir);
  const std::vector<uint16_t> a_bits = {0x3f80, 0x4000, 0x4040,
                                        0x4080, 0x40a0, 0x40c0};  // bf16 1..6
  const std::vector<float> b = {1, 0.5f, 0.25f};
  write_npy(dir / "a.npy", make_npy<uint16_t>({2, 3}, a_bits));
  write_npy(dir / "b.npy", make_npy<float>({3, 1}, b));
  InputChoices choices;
  choices.files = {{"A", dir / "a.npy"}, {"B", dir / "b.npy"}};
  choices.formats = {{"A", "bf16"}};
  choices.omitted = {"C"};
  const auto result = run(*plugin, "gemm_f32", choices);
  ASSERT_EQ(result.inputs.size(), 2u);
  EXPECT_EQ(result.inputs[0].format, "bf16");
  EXPECT_EQ(result.inputs[0].shape, (std::vector<int64_t>{2, 3}));
  float d0 = 0;
  std::memcpy(&d0, result.kernel_outputs[0].bytes.data(), sizeof d0);
  EXPECT_EQ(d0, 1 + 1 + 0.75f);
  EXPECT_TRUE(result.passed());

  // A uint16 file without --format is ambiguous between bf16 and fp16.
  choices.formats.clear();
  EXPECT_THROW(make_validation_request(plugin->info().kernel("gemm_f32"), choices),
               std::invalid_argument);
  // A generated input must agree with the symbols a file fixed.
  choices.formats = {{"A", "bf16"}};
  choices.dimensions = {{"K", 4}};
  EXPECT_THROW(make_validation_request(plugin->info().kernel("gemm_f32"), choices),
               std::invalid_argument);
  std::filesystem::remove_all(dir);
}

TEST(ValidateInputs, GeneratedInputsAreReproducibleAndInRange) {
  const auto plugin = open(kPluginDir + "/cpu_reference.so");
  const auto& kernel = plugin->info().kernel("gemm_f32");
  InputChoices choices;
  choices.formats = {{"A", "bf16"}};
  const auto first = make_validation_request(kernel, choices);
  const auto second = make_validation_request(kernel, choices);
  EXPECT_EQ(first.inputs[0].bytes, second.inputs[0].bytes);
  InputChoices other_seed = choices;
  other_seed.seed = 2;
  EXPECT_NE(first.inputs[0].bytes, make_validation_request(kernel, other_seed).inputs[0].bytes);
  EXPECT_EQ(first.inputs[0].shape, (std::vector<int64_t>{64, 64}));
  for (int64_t i = 0; i < first.inputs[1].element_count(); ++i) {
    float v = 0;
    std::memcpy(&v, first.inputs[1].bytes.data() + 4 * i, 4);
    EXPECT_TRUE(v >= -1.0f && v <= 1.0f) << v;
  }
  EXPECT_EQ(default_dimension(kernel, "M"), 64);
}

TEST(OutputComparison, CountsUlpsAcrossZeroAndKeepsNanApart) {
  EXPECT_EQ(ulp_distance(0x3f800000, 0x3f800001, 32), 1);
  EXPECT_EQ(ulp_distance(0x3f800001, 0x3f800000, 32), -1);
  EXPECT_EQ(ulp_distance(0x80000001, 0x00000001, 32), 2);  // -min_sub to +min_sub: via one zero
  EXPECT_EQ(ulp_distance(0x80000000, 0x00000000, 32), 0);  // -0 and +0 are one value

  auto kernel = plugins::HostTensor::zeros("D", "fp32", {4});
  auto emulation = plugins::HostTensor::zeros("D", "fp32", {4});
  const uint32_t k_bits[] = {0x3f800000, 0x3f800002, 0x7fc00000, 0x7fc00000};
  const uint32_t e_bits[] = {0x3f800000, 0x3f800000, 0x7fc00000, 0x3f800000};
  std::memcpy(kernel.bytes.data(), k_bits, sizeof k_bits);
  std::memcpy(emulation.bytes.data(), e_bits, sizeof e_bits);
  const auto c = compare_outputs(kernel, emulation);
  EXPECT_EQ(c.values, 4);
  EXPECT_EQ(c.bitwise_equal, 2);
  EXPECT_EQ(c.both_nan, 1);
  EXPECT_EQ(c.nan_mismatch, 1);
  EXPECT_EQ(c.max_abs_ulps, 2);
  EXPECT_DOUBLE_EQ(c.mean_signed_ulps, 1.0);                             // (0 + 2) / 2
  EXPECT_DOUBLE_EQ(c.mean_signed_difference, std::ldexp(2.0, -23) / 2);  // (0 + 2 ulp) / 2
  int64_t in_histogram = 0;
  for (const auto& b : c.histogram) {
    in_histogram += b.count;
    if (b.low == 2 && b.high == 2) {
      EXPECT_EQ(b.count, 1);
    }
    if (b.low == 0) {
      EXPECT_EQ(b.count, 1);
    }
  }
  EXPECT_EQ(in_histogram, 2);
  EXPECT_FALSE(c.bit_exact());
}

TEST(OutputComparison, PercentagesShowOneValueInAMillionAndNeverRoundToAllOrNone) {
  EXPECT_EQ(percentage_text(65534, 65536), "99.99695");  // 99.996948...
  EXPECT_EQ(percentage_text(999999, 1000000), "99.9999");
  EXPECT_EQ(percentage_text(9999999, 10000000), "99.99999");
  EXPECT_EQ(percentage_text(999999999, 1000000000), "99.99999");  // 99.9999999: not 100
  EXPECT_EQ(percentage_text(1, 1000000000), "0.00001");           // 1e-7: not 0
  EXPECT_EQ(percentage_text(1, 3), "33.33333");
  EXPECT_EQ(percentage_text(2, 3), "66.66667");
  EXPECT_EQ(percentage_text(1, 2), "50");
  EXPECT_EQ(percentage_text(4532, 8192), "55.32227");
  EXPECT_EQ(percentage_text(8192, 8192), "100");
  EXPECT_EQ(percentage_text(0, 8192), "0");
  EXPECT_EQ(percentage_text(0, 0), "100");  // no value differs
  const int64_t huge = int64_t{1} << 62;
  EXPECT_EQ(percentage_text(huge - 1, huge), "99.99999");
}

}  // namespace
}  // namespace simprec::validate
