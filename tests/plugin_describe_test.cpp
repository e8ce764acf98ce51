// Reading C descriptors (describe_plugin) directly from structs built here: what is accepted,
// including descriptors from a newer minor version, and each way a description is refused.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>

#include "plugins/host/describe.hpp"
#include "plugins/host/kernel_request.hpp"
#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {
namespace {

// A valid one-kernel plugin whose parts a test may spoil before describing it.
struct Fixture {
  SimprecOperandSpec a{
      SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "A", SIMPREC_OPERAND_INPUT, 0, "bf16, fp16", "M,K"};
  SimprecOperandSpec b{
      SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "B", SIMPREC_OPERAND_INPUT, 0, "bf16", "K,N"};
  SimprecOperandSpec d{
      SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "D", SIMPREC_OPERAND_OUTPUT, 0, "fp32", "M,N"};
  const SimprecOperandSpec* operands[3] = {&a, &b, &d};
  SimprecDimensionSpec k{SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "K", 16, 1024, 16};
  const SimprecDimensionSpec* dimensions[1] = {&k};
  SimprecParameterSpec seed{
      SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, "seed", SIMPREC_VALUE_INT64, 0, "0", nullptr};
  const SimprecParameterSpec* parameters[1] = {&seed};
  SimprecNamedValue accumulator{};
  const SimprecNamedValue* attributes[1] = {&accumulator};
  SimprecKernel kernel{};
  const SimprecKernel* kernels[1] = {&kernel};
  SimprecPlugin plugin{};

  static SimprecStatus run(const SimprecRunArgs*) { return SIMPREC_OK; }

  Fixture() {
    accumulator.struct_size = SIMPREC_NAMED_VALUE_STRUCT_SIZE;
    accumulator.name = "accumulator_format";
    accumulator.type = SIMPREC_VALUE_STRING;
    accumulator.string_value = "fp32";
    kernel.struct_size = SIMPREC_KERNEL_STRUCT_SIZE;
    kernel.name = "mma";
    kernel.kind = SIMPREC_KERNEL_MATMUL;
    kernel.flags = SIMPREC_KERNEL_FLAG_BIT_EXACT;
    kernel.emulation_model = "tc:sm90-mma-bf16";
    kernel.operand_count = 3;
    kernel.operands = operands;
    kernel.dimension_count = 1;
    kernel.dimensions = dimensions;
    kernel.parameter_count = 1;
    kernel.parameters = parameters;
    kernel.attribute_count = 1;
    kernel.attributes = attributes;
    kernel.run = run;
    plugin.struct_size = SIMPREC_PLUGIN_STRUCT_SIZE;
    plugin.abi_major = SIMPREC_PLUGIN_ABI_MAJOR;
    plugin.abi_minor = SIMPREC_PLUGIN_ABI_MINOR;
    plugin.name = "fixture";
    plugin.version = "0.1";
    plugin.kernel_count = 1;
    plugin.kernels = kernels;
  }

  // The refusal message ("" when accepted).
  std::string refusal() const {
    try {
      describe_plugin(&plugin, "fixture.so");
    } catch (const PluginError& e) {
      return e.what();
    }
    return "";
  }
};

TEST(PluginDescribe, ReadsAValidDescription) {
  Fixture f;
  const PluginInfo info = describe_plugin(&f.plugin, "fixture.so");
  ASSERT_EQ(info.kernels.size(), 1u);
  const KernelInfo& k = info.kernels[0];
  EXPECT_EQ(k.emulation_model, "tc:sm90-mma-bf16");
  EXPECT_TRUE(k.bit_exact);
  EXPECT_EQ(k.operand("A")->formats, (std::vector<std::string>{"bf16", "fp16"}));  // spaces dropped
  EXPECT_EQ(k.dimension("K")->multiple_of, 16);
  EXPECT_EQ(k.parameter("seed")->default_value, "0");
  EXPECT_EQ(std::get<std::string>(k.attribute("accumulator_format")->value), "fp32");
}

TEST(PluginDescribe, AcceptsNotesForReaders) {
  Fixture f;
  SimprecNamedValue note{};
  note.struct_size = SIMPREC_NAMED_VALUE_STRUCT_SIZE;
  note.name = "info.instruction";
  note.type = SIMPREC_VALUE_STRING;
  note.string_value = "mma.sync.m16n8k16";
  const SimprecNamedValue* both[2] = {&f.accumulator, &note};
  f.kernel.attribute_count = 2;
  f.kernel.attributes = both;
  EXPECT_EQ(f.refusal(), "");
}

TEST(PluginDescribe, AcceptsDescriptionsOfANewerMinorVersion) {
  // A newer minor version appends fields: larger struct_size, larger minor. Still readable.
  Fixture f;
  f.plugin.abi_minor = SIMPREC_PLUGIN_ABI_MINOR + 3;
  f.plugin.struct_size += 16;
  f.kernel.struct_size += 8;
  EXPECT_EQ(f.refusal(), "");
}

// A fixed size where the kind has a symbol (D [M,16] for [M,N]) may agree with the inputs of a
// call; the call decides, before the plugin runs (kind_shapes.hpp).
TEST(PluginDescribe, LeavesToTheCallWhatOnlyItsSizesShow) {
  Fixture f;
  f.d.shape = "M,16";
  const PluginInfo info = describe_plugin(&f.plugin, "fixture.so");
  const auto request = [](int64_t n) {
    KernelRequest r;
    r.kernel = "mma";
    r.inputs = {HostTensor::zeros("A", "bf16", {4, 32}), HostTensor::zeros("B", "bf16", {32, n})};
    return r;
  };
  EXPECT_EQ(prepare_outputs(info.kernels[0], request(16)).at(0).shape,
            (std::vector<int64_t>{4, 16}));
  try {
    prepare_outputs(info.kernels[0], request(8));
    ADD_FAILURE() << "D [4,16] accepted for B [32,8]";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "kernel 'mma': output 'D' has shape [4,16] (from its declaration [M,16]), but a "
              "matmul kernel's D is [M,N]: N is 8 in input 'B' (dimension 2), not 16");
  }
}

TEST(PluginDescribe, RefusesEachKindOfBadDescription) {
  const std::vector<std::pair<std::function<void(Fixture&)>, std::string>> cases = {
      {[](Fixture& f) { f.plugin.abi_major = 0; }, "speaks plugin ABI 0.0, this host speaks 1.0"},
      {[](Fixture& f) { f.plugin.struct_size = 4; }, "too small to hold a version"},
      {[](Fixture& f) { f.plugin.struct_size = 40; }, "SimprecPlugin.struct_size is 40"},
      {[](Fixture& f) { f.plugin.name = nullptr; }, "plugin fixture.so: no name"},
      {[](Fixture& f) { f.plugin.kernels = nullptr; }, "1 kernels but a null array"},
      {[](Fixture& f) { f.kernels[0] = nullptr; }, "kernel #0: null SimprecKernel pointer"},
      {[](Fixture& f) { f.kernel.run = nullptr; }, "'mma': no run function"},
      {[](Fixture& f) { f.kernel.kind = 0; }, "unknown kernel kind 0"},
      {[](Fixture& f) { f.kernel.emulation_model = nullptr; },
       "claims bit-exactness but names no emulation model"},
      {[](Fixture& f) { f.a.formats = "bf16,fp12"; }, "operand #0 'A': format:"},
      {[](Fixture& f) { f.a.shape = "M,K-1"; },
       "shape dimension 'K-1' is neither a symbol nor an integer"},
      {[](Fixture& f) { f.a.direction = 7; }, "'A': unknown direction 7"},
      {[](Fixture& f) { f.a.shape = "M,99999999999999999999"; },
       "shape dimension '99999999999999999999' is not in [1, 2147483647]"},
      {[](Fixture& f) { f.a.shape = "M,0"; }, "shape dimension '0' is not in [1, 2147483647]"},
      {[](Fixture& f) { f.d.shape = "M,P"; },
       "output 'D' has dimension 'P' that no input determines"},
      {[](Fixture& f) { f.b.name = "A"; }, "operand 'A' declared twice"},
      {[](Fixture& f) { f.d.name = "E"; }, "matmul kernels need an operand 'D'"},
      {[](Fixture& f) { f.k.min = 0; }, "'K': min 0 is below 1"},
      {[](Fixture& f) { f.k.max = 8; }, "'K': max is below min"},
      {[](Fixture& f) { f.seed.type = 9; }, "'seed' has unknown value type 9"},
      {[](Fixture& f) { f.accumulator.string_value = nullptr; }, "no string value"},
      {[](Fixture& f) { f.accumulator.struct_size = 8; }, "SimprecNamedValue.struct_size is 8"},
      // A typo in an attribute name would leave a fact out of the emulation: refused.
      {[](Fixture& f) { f.accumulator.name = "accumulator_fmt"; },
       "attribute 'accumulator_fmt' is not one the host reads for matmul kernels (known: "
       "accumulator_format; notes for readers are named info.NAME)"},
      // An attention attribute on a matmul kernel means nothing to the host.
      {[](Fixture& f) { f.accumulator.name = "output_format"; },
       "attribute 'output_format' is not one the host reads for matmul kernels"},
      {[](Fixture& f) { f.accumulator.name = "info."; }, "attribute 'info.' is not one"},
      {[](Fixture& f) {
         static const SimprecNamedValue* twice[2];
         twice[0] = twice[1] = &f.accumulator;
         f.kernel.attribute_count = 2;
         f.kernel.attributes = twice;
       },
       "attribute 'accumulator_format' declared twice"},
      // Found by fuzz/plugin_description_fuzz: text that is not UTF-8 cannot travel as JSON.
      {[](Fixture& f) { f.plugin.name = "caf\xe9"; }, "plugin fixture.so: name is not valid UTF-8"},
      {[](Fixture& f) { f.kernel.description = "\xc0\xaf"; },
       "'mma': description is not valid UTF-8"},
      {[](Fixture& f) { f.accumulator.string_value = "fp32\xff"; },
       "'accumulator_format': string value is not valid UTF-8"},
      // A control character in anything `plugins list` prints as a field would end its record
      // and start a forged one; a space in a name would blur its key=value fields.
      {[](Fixture& f) { f.kernel.name = "mma\nplugin forged version=1"; },
       "kernel #0: name 'mma\\nplugin forged version=1' holds a control character (at byte 3); "
       "names and values are printed one per line"},
      {[](Fixture& f) { f.kernel.name = "mma kind=function"; },
       "kernel #0: name 'mma kind=function' holds a space"},
      {[](Fixture& f) { f.plugin.version = "0.1\r"; },
       "version '0.1\\r' holds a control character (at byte 3)"},
      {[](Fixture& f) { f.kernel.emulation_model = "tc:sm90\x1b[2J"; },
       "emulation model 'tc:sm90\\x1b[2J' holds a control character"},
      {[](Fixture& f) { f.seed.default_value = "0\n"; }, "default value '0\\n' holds"},
      {[](Fixture& f) { f.accumulator.string_value = "fp32\t"; }, "string value 'fp32\\t' holds"},
      {[](Fixture& f) { f.k.symbol = "K\n"; }, "symbol 'K\\n' holds a control character"},
      // Shapes against the kind's (matmul: A [M,K], B [K,N], D [M,N]), which the host's own
      // emulation reads and writes.
      {[](Fixture& f) { f.d.shape = "M,M"; },
       "'mma': output 'D' is declared [M,M], but a matmul kernel's D is [M,N]: its dimension 2 is "
       "N, which input 'B' declares as 'N', not 'M'"},
      {[](Fixture& f) { f.b.shape = "M,N"; },
       "input 'B' is declared [M,N], but a matmul kernel's B is [K,N]: its dimension 1 is K, "
       "which input 'A' declares as 'K', not 'M'"},
      {[](Fixture& f) { f.d.shape = "M,N,1"; },
       "output 'D' is declared [M,N,1], but a matmul kernel's D is [M,N]"},
      {[](Fixture& f) {
         f.a.shape = "16,K";
         f.d.shape = "32,N";
       },
       "output 'D' is declared [32,N], but a matmul kernel's D is [M,N]: its dimension 1 is M, "
       "which input 'A' declares as '16', not '32'"},
      {[](Fixture& f) {
         f.plugin.kernel_count = 2;
         static const SimprecKernel* twice[2];
         twice[0] = twice[1] = &f.kernel;
         f.plugin.kernels = twice;
       },
       "kernel 'mma' declared twice"},
  };
  for (const auto& [spoil, expected] : cases) {
    Fixture f;
    spoil(f);
    const std::string message = f.refusal();
    EXPECT_NE(message.find(expected), std::string::npos)
        << "expected '" << expected << "', got '" << message << "'";
  }
}

TEST(PluginDescribe, NoDescriptionAtAll) {
  try {
    describe_plugin(nullptr, "fixture.so");
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("returned no description"), std::string::npos);
  }
}

}  // namespace
}  // namespace simprec::plugins
