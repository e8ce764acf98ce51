// simprec validate on attention kernels, through an in-process fake of the flash_gpu plugin
// whose kernels are the independent scalar implementation of cuda_fa2_reference.hpp and whose
// "device exp2" is correctly rounded with some last bits flipped: honest claims pass bit for
// bit (forward, backward from generated or from the forward kernel's O and LSE), the exact
// reference's mean errors are reported, and misuse is refused before the kernel runs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "lib/npy/npy.hpp"

#include "lib/validate/kernel_emulation.hpp"
#include "lib/validate/tensor_values.hpp"
#include "lib/validate/validation.hpp"
#include "lib/validate/validation_inputs.hpp"
#include "plugins/host/plugin.hpp"
#include "tests/cuda_fa2_reference.hpp"

namespace simprec::validate {
namespace {

using plugins::HostTensor;
using plugins::KernelInfo;
using plugins::KernelKind;
using plugins::ValueType;

float device_exp2(float x) {
  const float y = simprec::testing::correctly_rounded_exp2(x);
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (y == 0 || !std::isfinite(y) || (bits >> 3) % 5 != 0) return y;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(y) ^ 1u);
}

plugins::OperandInfo operand(const char* name, bool output, const char* format,
                             std::vector<std::string> shape, bool optional = false) {
  return {name, output, optional, {format}, std::move(shape)};
}

KernelInfo attention_kernel(const std::string& name, KernelKind kind, const std::string& exp2) {
  KernelInfo k;
  k.name = name;
  k.kind = kind;
  k.bit_exact = true;
  k.emulation_model = "cuda-fa2";
  const std::vector<std::string> q_shape = {"B", "H", "Sq", "D"}, k_shape = {"B", "H", "Sk", "D"};
  k.operands = {operand("Q", false, "bf16", q_shape), operand("K", false, "bf16", k_shape),
                operand("V", false, "bf16", k_shape)};
  k.parameters = {{"causal", ValueType::kBool}, {"scale", ValueType::kFloat64}};
  if (kind == KernelKind::kAttentionForward) {
    k.operands.push_back(operand("O", true, "bf16", q_shape));
    k.operands.push_back(operand("LSE", true, "fp32", {"B", "H", "Sq"}, true));
    for (const char* p : {"beta", "eps"}) k.parameters.push_back({p, ValueType::kFloat64});
    k.parameters.push_back({"beta_rowmax", ValueType::kBool});
    for (const char* p : {"sr_p_bits", "seed"}) k.parameters.push_back({p, ValueType::kInt64});
  } else {
    k.operands.push_back(operand("O", false, "bf16", q_shape));
    k.operands.push_back(operand("dO", false, "bf16", q_shape));
    k.operands.push_back(operand("LSE", false, "fp32", {"B", "H", "Sq"}));
    k.operands.push_back(operand("dQ", true, "bf16", q_shape));
    k.operands.push_back(operand("dK", true, "bf16", k_shape));
    k.operands.push_back(operand("dV", true, "bf16", k_shape));
  }
  k.attributes = {{"block_rows", std::string("32")},
                  {"block_cols", std::string("32")},
                  {"format", std::string("bf16")},
                  {"output_format", std::string("bf16")}};
  if (!exp2.empty()) k.attributes.push_back({"exp2_function", exp2});
  return k;
}

// The plugin: forward and backward kernels taking exp2 from "ex2", forward kernels naming a
// function the plugin does not have and naming none, and "ex2" itself (at most 1000 arguments per
// call, a multiple of 8).
class FakeFlashPlugin : public plugins::Plugin {
 public:
  FakeFlashPlugin() {
    info_.name = "fake_flash";
    info_.kernels = {
        attention_kernel("fwd", KernelKind::kAttentionForward, "ex2"),
        attention_kernel("bwd", KernelKind::kAttentionBackward, "ex2"),
        attention_kernel("fwd_missing_exp2", KernelKind::kAttentionForward, "nope"),
        // Runs with the device's exp2 but does not say so: its claim fails.
        attention_kernel("fwd_unnamed_exp2", KernelKind::kAttentionForward, ""),
    };
    KernelInfo f;
    f.name = "ex2";
    f.kind = KernelKind::kFunction;
    f.operands = {operand("x", false, "fp32", {"N"}), operand("y", true, "fp32", {"N"})};
    f.dimensions = {{"N", 1, 1000, 8}};
    f.attributes = {{"function", std::string("exp2")}};
    info_.kernels.push_back(f);
  }
  const plugins::PluginInfo& info() const override { return info_; }

  std::vector<HostTensor> run(const plugins::KernelRequest& request) override {
    const KernelInfo& kernel = info_.kernel(request.kernel);
    std::vector<HostTensor> outputs = plugins::prepare_outputs(kernel, request);
    const auto input = [&](const char* name) -> const HostTensor& {
      for (const auto& t : request.inputs) {
        if (t.name == name) return t;
      }
      throw std::invalid_argument(name);
    };
    const auto output = [&](const char* name) -> HostTensor& {
      for (auto& t : outputs) {
        if (t.name == name) return t;
      }
      throw std::invalid_argument(name);
    };
    if (kernel.kind == KernelKind::kFunction) {
      ++function_calls;
      const HostTensor& x = input("x");
      for (int64_t i = 0; i < x.element_count(); ++i) {
        const float y = device_exp2(std::bit_cast<float>(static_cast<uint32_t>(x.bits_at(i))));
        output("y").set_bits_at(i, std::bit_cast<uint32_t>(y));
      }
      return outputs;
    }
    ++attention_calls;
    const HostTensor& q = input("Q");
    const int64_t problems = q.shape[0] * q.shape[1], nq = q.shape[2], d = q.shape[3];
    const int64_t nk = input("K").shape[2];
    simprec::testing::FlashSpec spec;
    spec.block_rows = spec.block_cols = 32;
    spec.scale = 1 / std::sqrt(static_cast<double>(d));
    spec.exp2 = device_exp2;
    for (const auto& p : request.parameters) {
      if (p.name == "causal") spec.causal = std::get<bool>(p.value);
      if (p.name == "scale") spec.scale = std::get<double>(p.value);
      if (p.name == "beta_rowmax") spec.beta_rowmax = std::get<bool>(p.value);
      if (p.name == "beta") spec.beta = std::get<double>(p.value);
      if (p.name == "eps") spec.eps = std::get<double>(p.value);
      if (p.name == "sr_p_bits") spec.sr_bits = static_cast<int>(std::get<int64_t>(p.value));
      if (p.name == "seed") spec.seed = static_cast<uint64_t>(std::get<int64_t>(p.value));
    }
    const std::vector<double> qv = values_of(q), kv = values_of(input("K")),
                              vv = values_of(input("V"));
    if (kernel.kind == KernelKind::kAttentionForward) {
      std::vector<double> o(problems * nq * d);
      std::vector<float> lse(problems * nq);
      for (int64_t p = 0; p < problems; ++p) {
        simprec::testing::flash_forward(spec, static_cast<uint32_t>(p), nq, nk, d,
                                        qv.data() + p * nq * d, kv.data() + p * nk * d,
                                        vv.data() + p * nk * d, o.data() + p * nq * d,
                                        lse.data() + p * nq);
      }
      for (size_t i = 0; i < o.size(); ++i) set_value(output("O"), i, o[i]);
      for (auto& t : outputs) {
        if (t.name == "LSE") {
          for (size_t i = 0; i < lse.size(); ++i) set_value(t, i, lse[i]);
        }
      }
      return outputs;
    }
    const std::vector<double> ov = values_of(input("O")), dov = values_of(input("dO")),
                              lv = values_of(input("LSE"));
    std::vector<double> dq(qv.size()), dk(kv.size()), dv(vv.size());
    for (int64_t p = 0; p < problems; ++p) {
      const std::vector<float> lse(lv.begin() + p * nq, lv.begin() + (p + 1) * nq);
      simprec::testing::flash_backward(
          spec, nq, nk, d, qv.data() + p * nq * d, kv.data() + p * nk * d, vv.data() + p * nk * d,
          ov.data() + p * nq * d, dov.data() + p * nq * d, lse.data(), dq.data() + p * nq * d,
          dk.data() + p * nk * d, dv.data() + p * nk * d);
    }
    for (size_t i = 0; i < dq.size(); ++i) set_value(output("dQ"), i, dq[i]);
    for (size_t i = 0; i < dk.size(); ++i) set_value(output("dK"), i, dk[i]);
    for (size_t i = 0; i < dv.size(); ++i) set_value(output("dV"), i, dv[i]);
    return outputs;
  }

  int attention_calls = 0, function_calls = 0;

 private:
  plugins::PluginInfo info_;
};

InputChoices shape(const char* generator = "normal") {
  InputChoices choices;
  choices.generator = generator;
  choices.dimensions = {{"B", 1}, {"H", 2}, {"Sq", 64}, {"D", 32}};
  return choices;
}

ValidationResult run(FakeFlashPlugin& plugin, const std::string& kernel,
                     const InputChoices& choices, const ValidationOptions& options = {}) {
  return validate_kernel(plugin, make_validation_request(plugin.info().kernel(kernel), choices),
                         options);
}

void expect_reference_errors(const ValidationResult& r) {
  for (const auto& c : r.comparisons) {
    ASSERT_TRUE(c.kernel_mean_signed_error.has_value()) << c.name;
    ASSERT_TRUE(c.emulation_mean_signed_error.has_value()) << c.name;
    // Bit-exact sides have the same error; it is small but not zero (bf16 outputs).
    EXPECT_EQ(*c.kernel_mean_signed_error, *c.emulation_mean_signed_error) << c.name;
    EXPECT_LT(std::abs(*c.kernel_mean_signed_error), 1e-2) << c.name;
  }
}

TEST(ValidateAttention, HonestForwardClaimsPassBitForBit) {
  struct Case {
    const char* generator;
    std::map<std::string, std::string> parameters;
  };
  const Case cases[] = {
      {"normal", {}},
      {"normal", {{"causal", "true"}, {"scale", "0.3"}}},
      {"repeated-max", {{"beta_rowmax", "true"}, {"beta", "3"}}},
      {"peaky", {{"sr_p_bits", "8"}, {"seed", "42"}, {"causal", "1"}}},
      {"low-rank", {{"sr_p_bits", "16"}, {"seed", "7"}}},
  };
  for (const auto& c : cases) {
    FakeFlashPlugin plugin;
    InputChoices choices = shape(c.generator);
    choices.parameters = c.parameters;
    const ValidationResult r = run(plugin, "fwd", choices);
    SCOPED_TRACE(c.generator);
    EXPECT_TRUE(r.enforced);
    EXPECT_TRUE(r.bit_exact());
    ASSERT_EQ(r.comparisons.size(), 2u);
    EXPECT_EQ(r.comparisons[0].name, "O");
    EXPECT_EQ(r.comparisons[1].name, "LSE");
    expect_reference_errors(r);
    EXPECT_EQ(plugin.attention_calls, 1);
    // 1 x 2 x 64 x 64 scores and the rescale arguments: more than 1000, so several calls.
    EXPECT_GE(plugin.function_calls, 2);
  }
}

TEST(ValidateAttention, AKernelThatHidesItsExp2FailsItsClaim) {
  FakeFlashPlugin plugin;
  const ValidationResult r = run(plugin, "fwd_unnamed_exp2", shape());
  EXPECT_TRUE(r.enforced);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(plugin.function_calls, 0);
  ASSERT_EQ(r.comparisons.size(), 2u);
  EXPECT_LT(r.comparisons[1].bitwise_equal, r.comparisons[1].values);  // the fp32 LSE shows it
}

TEST(ValidateAttention, AnotherPresetIsExploration) {
  // fa2 (one sequential row sum, alpha from the exact max difference) is not the kernel's
  // numerics: the outputs differ, and the kernel's claim is not enforced against it.
  FakeFlashPlugin plugin;
  const ValidationResult r = run(plugin, "fwd", shape(), {"fa2", false});
  EXPECT_FALSE(r.enforced);
  EXPECT_FALSE(r.bit_exact());
}

TEST(ValidateAttention, BackwardPassesFromGeneratedAndFromKernelForwards) {
  FakeFlashPlugin plugin;
  for (bool causal : {false, true}) {
    InputChoices choices = shape("normal");
    choices.parameters = {{"causal", causal ? "true" : "false"}};
    // O and LSE from the emulated forward pass.
    const ValidationResult generated = run(plugin, "bwd", choices);
    EXPECT_TRUE(generated.enforced);
    EXPECT_TRUE(generated.bit_exact()) << causal;
    ASSERT_EQ(generated.comparisons.size(), 3u);
    expect_reference_errors(generated);

    // O and LSE from the forward kernel, through .npy files as `--save` writes them.
    const ValidationResult forward = run(plugin, "fwd", choices);
    const auto dir = std::filesystem::temp_directory_path() /
                     ("simprec-validate-attention-" + std::to_string(causal));
    std::filesystem::create_directories(dir);
    for (const auto& t : forward.kernel_outputs)
      write_npy(dir / (t.name + ".kernel.npy"), npy_of(t));
    choices.files = {{"O", dir / "O.kernel.npy"}, {"LSE", dir / "LSE.kernel.npy"}};
    const auto request = make_validation_request(plugin.info().kernel("bwd"), choices);
    for (const auto& t : request.inputs) {
      if (t.name == "O") EXPECT_EQ(t.bytes, forward.kernel_outputs[0].bytes);
      if (t.name == "LSE") EXPECT_EQ(t.bytes, forward.kernel_outputs[1].bytes);
    }
    const ValidationResult chained = validate_kernel(plugin, request, {});
    EXPECT_TRUE(chained.bit_exact()) << causal;
    std::filesystem::remove_all(dir);
  }
}

void expect_refused(FakeFlashPlugin& plugin, const std::string& kernel, const InputChoices& choices,
                    const std::string& message, const ValidationOptions& options = {}) {
  const int calls = plugin.attention_calls;
  try {
    run(plugin, kernel, choices, options);
    ADD_FAILURE() << "no error; expected " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
  EXPECT_EQ(plugin.attention_calls, calls) << "the kernel ran before the refusal: " << message;
}

TEST(ValidateAttention, MisuseIsRefusedBeforeTheKernelRuns) {
  FakeFlashPlugin plugin;
  expect_refused(plugin, "fwd_missing_exp2", shape(),
                 "takes exp2 from device function 'nope', which plugin 'fake_flash' does not "
                 "have");
  for (const auto& [name, value, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"sr_p_bits", "3", "parameter sr_p_bits=3: sr-p-tiled: the bit count 3 must divide 32"},
           {"sr_p_bits", "-8", "parameter sr_p_bits=-8: 0 (off), or the bit count of sr-p-tiled"},
           {"scale", "-2", "expected a positive finite number"},
           {"beta", "-1", "parameter beta=-1: beta-rowmax beta '-1': expected a number > 1"},
           {"beta", "1", "parameter beta=1: beta-rowmax beta '1': expected a number > 1"},
           {"eps", "-0.5", "parameter eps=-0.5: beta-rowmax eps '-0.5': expected a number >= 0"}}) {
    InputChoices choices = shape();
    choices.parameters = {{name, value}};
    expect_refused(plugin, "fwd", choices, message);
  }
  expect_refused(plugin, "fwd", shape(), "model 'sequential': unknown preset 'sequential'",
                 {"sequential", false});
  expect_refused(plugin, "fwd", shape(), "model 'cuda-fa2,p_cast=bf17': unknown format",
                 {"cuda-fa2,p_cast=bf17", false});
  // --generate is for attention kernels; a function kernel is not one.
  EXPECT_THROW(make_validation_request(plugin.info().kernel("ex2"), shape()),
               std::invalid_argument);
  // A key length of its own (Sk != Sq) is generated, not refused: K and V get Sk rows.
  InputChoices ragged = shape();
  ragged.dimensions["Sk"] = 32;
  const plugins::KernelRequest request =
      make_validation_request(plugin.info().kernel("fwd"), ragged);
  for (const plugins::HostTensor& t : request.inputs) {
    ASSERT_EQ(t.shape.size(), 4u) << t.name;
    EXPECT_EQ(t.shape[2], t.name == "Q" ? 64 : 32) << t.name;
  }
  InputChoices unknown = shape("uniform");
  EXPECT_THROW(make_validation_request(plugin.info().kernel("fwd"), unknown),
               std::invalid_argument);
}

TEST(ValidateAttention, EmulatingAKernelWithADeviceFunctionNeedsThePlugin) {
  FakeFlashPlugin plugin;
  const KernelInfo& kernel = plugin.info().kernel("fwd");
  const auto request = make_validation_request(kernel, shape());
  std::vector<HostTensor> outputs = plugins::prepare_outputs(kernel, request);
  const EmulationCall call{kernel, "cuda-fa2", request.inputs, request.parameters};
  EXPECT_THROW(emulate_kernel(call, outputs), std::invalid_argument);
}

}  // namespace
}  // namespace simprec::validate
