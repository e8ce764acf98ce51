// Loading plugins in process: the CPU reference plugin is described and called correctly, and
// every broken plugin is refused with a message that says why.
#include <gtest/gtest.h>

#include "tests/plugin_test_support.hpp"

#include <cmath>
#include <cstring>

#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {
namespace {

std::unique_ptr<Plugin> cpu_reference() {
  return open_plugin(kPluginDir + "/cpu_reference.so", in_process());
}

HostTensor fp32_tensor(const std::string& name, std::vector<int64_t> shape,
                       const std::vector<float>& values) {
  HostTensor t = HostTensor::zeros(name, "fp32", std::move(shape));
  std::memcpy(t.bytes.data(), values.data(), values.size() * sizeof(float));
  return t;
}

std::vector<float> floats_of(const HostTensor& t) {
  std::vector<float> v(t.bytes.size() / sizeof(float));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

// The message of the PluginError that opening the plugin throws ("" when it does not throw).
std::string refusal(const std::string& file, Isolation isolation = Isolation::kInProcess) {
  try {
    open_plugin(kBrokenDir + "/" + file, with_isolation(isolation));
  } catch (const PluginError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginLoader, DescribesTheCpuReferencePlugin) {
  const auto plugin = cpu_reference();
  const PluginInfo& info = plugin->info();
  EXPECT_EQ(info.name, "cpu_reference");
  EXPECT_EQ(info.abi_major, 1u);
  ASSERT_EQ(info.kernels.size(), 5u);
  const KernelInfo& gemm = info.kernel("gemm_f32");
  EXPECT_EQ(gemm.kind, KernelKind::kMatmul);
  EXPECT_TRUE(gemm.bit_exact);
  EXPECT_EQ(gemm.emulation_model, "sequential");
  ASSERT_NE(gemm.operand("A"), nullptr);
  EXPECT_EQ(gemm.operand("A")->formats, (std::vector<std::string>{"fp32", "bf16", "fp16"}));
  EXPECT_EQ(gemm.operand("A")->shape, (std::vector<std::string>{"M", "K"}));
  EXPECT_TRUE(gemm.operand("C")->optional);
  EXPECT_TRUE(gemm.operand("D")->is_output);
  ASSERT_NE(gemm.attribute("accumulator_format"), nullptr);
  EXPECT_EQ(value_text(gemm.attribute("accumulator_format")->value), "fp32");
  const KernelInfo& attention = info.kernel("attention_forward_f32");
  EXPECT_EQ(attention.kind, KernelKind::kAttentionForward);
  ASSERT_NE(attention.parameter("causal"), nullptr);
  EXPECT_EQ(attention.parameter("causal")->type, ValueType::kBool);
  EXPECT_EQ(info.kernel("exp2_f32").kind, KernelKind::kFunction);
}

TEST(PluginLoader, UnknownKernelListsTheKernels) {
  const auto plugin = cpu_reference();
  try {
    plugin->info().kernel("gemm_f16");
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("gemm_f32"), std::string::npos) << e.what();
  }
}

TEST(PluginLoader, RunsGemm) {
  const auto plugin = cpu_reference();
  KernelRequest request;
  request.kernel = "gemm_f32";
  request.inputs = {fp32_tensor("A", {2, 3}, {1, 2, 3, 4, 5, 6}),
                    fp32_tensor("B", {3, 2}, {1, 0, 0, 1, 1, 1}),
                    fp32_tensor("C", {2, 2}, {0.5f, 0, 0, -1})};
  const auto outputs = plugin->run(request);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name, "D");
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(floats_of(outputs[0]), (std::vector<float>{4.5f, 5, 10, 10}));
}

TEST(PluginLoader, RunsGemmOnBf16BitPatterns) {
  const auto plugin = cpu_reference();
  KernelRequest request;
  request.kernel = "gemm_f32";
  HostTensor a = HostTensor::zeros("A", "bf16", {1, 2});
  a.set_bits_at(0, 0x3fc0);  // 1.5
  a.set_bits_at(1, 0x4000);  // 2
  HostTensor b = HostTensor::zeros("B", "bf16", {2, 1});
  b.set_bits_at(0, 0x4000);  // 2
  b.set_bits_at(1, 0xbf80);  // -1
  request.inputs = {a, b};
  const auto outputs = plugin->run(request);
  EXPECT_EQ(floats_of(outputs[0]), (std::vector<float>{1.0f}));
}

TEST(PluginLoader, RunsAttentionAndExp2) {
  const auto plugin = cpu_reference();
  KernelRequest attention;
  attention.kernel = "attention_forward_f32";
  // One query, two keys with equal scores: the output is the mean of the values.
  attention.inputs = {fp32_tensor("Q", {1, 1, 1, 2}, {1, 0}),
                      fp32_tensor("K", {1, 1, 2, 2}, {1, 0, 1, 0}),
                      fp32_tensor("V", {1, 1, 2, 1}, {2, 4})};
  attention.parameters = {{"causal", false}};
  const auto out = plugin->run(attention);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(floats_of(out[0])[0], 3.0f);
  EXPECT_NEAR(floats_of(out[1])[0], 1.0 / std::sqrt(2.0) + std::log(2.0), 1e-6);

  KernelRequest exp2;
  exp2.kernel = "exp2_f32";
  exp2.inputs = {fp32_tensor("x", {3}, {0, 1, -2})};
  EXPECT_EQ(floats_of(plugin->run(exp2)[0]), (std::vector<float>{1, 2, 0.25f}));
}

TEST(PluginLoader, RequestsThatDoNotFitAreRefusedBeforeThePluginRuns) {
  const auto plugin = cpu_reference();
  const auto message = [&](KernelRequest request) -> std::string {
    try {
      plugin->run(request);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  KernelRequest base;
  base.kernel = "gemm_f32";
  base.inputs = {fp32_tensor("A", {2, 3}, std::vector<float>(6)),
                 fp32_tensor("B", {3, 2}, std::vector<float>(6))};

  KernelRequest mismatched = base;
  mismatched.inputs[1] = fp32_tensor("B", {4, 2}, std::vector<float>(8));
  EXPECT_NE(message(mismatched).find("K is 3 in 'A' but 4 in 'B'"), std::string::npos)
      << message(mismatched);

  KernelRequest missing = base;
  missing.inputs.pop_back();
  EXPECT_NE(message(missing).find("needs input 'B'"), std::string::npos) << message(missing);

  KernelRequest wrong_format = base;
  wrong_format.inputs[0] = HostTensor::zeros("A", "e4m3fn", {2, 3});
  EXPECT_NE(message(wrong_format).find("accepted formats: fp32,bf16,fp16"), std::string::npos)
      << message(wrong_format);

  KernelRequest unknown_parameter = base;
  unknown_parameter.parameters = {{"tile", int64_t{64}}};
  EXPECT_NE(message(unknown_parameter).find("no parameter 'tile'"), std::string::npos)
      << message(unknown_parameter);

  KernelRequest bad_output_format = base;
  bad_output_format.output_formats["D"] = "bf16";
  EXPECT_NE(message(bad_output_format).find("operand 'D' in format 'bf16'"), std::string::npos)
      << message(bad_output_format);

  KernelRequest too_big = base;
  too_big.inputs = {fp32_tensor("A", {5000, 1}, std::vector<float>(5000)),
                    fp32_tensor("B", {1, 1}, {1})};
  EXPECT_NE(message(too_big).find("M = 5000 is above the largest accepted 4096"), std::string::npos)
      << message(too_big);

  KernelRequest wrong_type;
  wrong_type.kernel = "attention_forward_f32";
  wrong_type.inputs = {fp32_tensor("Q", {1, 1, 1, 1}, {1}), fp32_tensor("K", {1, 1, 1, 1}, {1}),
                       fp32_tensor("V", {1, 1, 1, 1}, {1})};
  wrong_type.parameters = {{"causal", int64_t{1}}};
  EXPECT_NE(message(wrong_type).find("parameter 'causal' is bool, given a int64"),
            std::string::npos)
      << message(wrong_type);
}

TEST(PluginLoader, RefusesBrokenPlugins) {
  EXPECT_NE(refusal("broken_no_entry.so").find("does not export simprec_plugin_entry()"),
            std::string::npos);
  EXPECT_NE(refusal("broken_wrong_major.so").find("speaks plugin ABI 2.0, this host speaks 1.0"),
            std::string::npos);
  EXPECT_NE(refusal("broken_entry_fails.so").find("(device error): no device found"),
            std::string::npos);
  EXPECT_NE(refusal("broken_unknown_kind.so").find("kernel #0 'gemm': unknown kernel kind 99"),
            std::string::npos);
  EXPECT_NE(refusal("broken_null_name.so").find("kernel #0: no name"), std::string::npos);
  EXPECT_NE(refusal("broken_small_struct.so").find("SimprecKernel.struct_size is 16"),
            std::string::npos);
  EXPECT_NE(refusal("broken_typo_attribute.so")
                .find("kernel #0 'gemm': attribute 'acumulator_format' is not one the host reads "
                      "for matmul kernels (known: accumulator_format;"),
            std::string::npos)
      << refusal("broken_typo_attribute.so");
}

TEST(PluginLoader, RefusesFilesThatAreNotPlugins) {
  try {
    open_plugin("/nonexistent/plugin.so", in_process());
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
  }
  try {
    open_plugin(SIMPREC_TEST_RUNNER, in_process());  // an executable, not a library
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be loaded"), std::string::npos) << e.what();
  }
}

TEST(PluginLoader, AFailingKernelReportsItsStatusAndMessage) {
  const auto plugin = open_plugin(kBrokenDir + "/broken_failing_kernel.so", in_process());
  KernelRequest request;
  request.kernel = "gemm";
  request.inputs = {fp32_tensor("A", {1, 1}, {1}), fp32_tensor("B", {1, 1}, {1})};
  try {
    plugin->run(request);
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "failed (device error): simulated device failure: out of memory"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace simprec::plugins
