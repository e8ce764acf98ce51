// The plugin description reader (plugins/host/describe.cpp) on descriptions built from the
// fuzz input: struct sizes up to the real ones, null or arbitrary strings, unknown kinds,
// directions, value types and formats, null entries, counts that match their arrays (a plugin
// that lies about an array's length cannot be checked by any host). It either refuses the
// description with a PluginError or returns one whose JSON form, as the runner sends it
// to the host, reads back as the same.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "plugins/host/describe.hpp"
#include "plugins/host/plugin_error.hpp"
#include "plugins/host/plugin_json.hpp"

namespace {

// Owns everything a built description points to.
class DescriptionBuilder {
 public:
  explicit DescriptionBuilder(FuzzedDataProvider& in) : in_(in) {}

  const SimprecPlugin* plugin() {
    auto& p = plugins_.emplace_back();
    p.struct_size = struct_size(sizeof(SimprecPlugin));
    p.abi_major = in_.ConsumeBool() ? SIMPREC_PLUGIN_ABI_MAJOR : in_.ConsumeIntegral<uint32_t>();
    p.abi_minor = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
    p.name = text({"cpu_reference", "broken"});
    p.version = text({"1.0.0"});
    p.description = text({"a plugin"});
    p.kernels = array<SimprecKernel>(p.kernel_count, 4, [&] { return kernel(); });
    p.shutdown = nullptr;
    return &p;
  }

 private:
  size_t struct_size(size_t real) {
    return in_.ConsumeBool() ? real : in_.ConsumeIntegralInRange<size_t>(0, real);
  }

  // Null, one of the likely strings, or arbitrary text.
  const char* text(std::initializer_list<const char*> likely) {
    switch (in_.ConsumeIntegralInRange(0, 3)) {
      case 0:
        return nullptr;
      case 1:
        return strings_.emplace_back(in_.ConsumeRandomLengthString(32)).c_str();
      default: {
        const std::vector<const char*> options(likely);
        return options[in_.ConsumeIntegralInRange<size_t>(0, options.size() - 1)];
      }
    }
  }

  // An array of pointers, some of them null, and its count; or a null array.
  template <class T, class Make>
  const T* const* array(size_t& count, size_t max_count, Make make) {
    count = in_.ConsumeIntegralInRange<size_t>(0, max_count);
    if (count > 0 && in_.ConsumeIntegralInRange(0, 15) == 0) return nullptr;
    auto& pointers = pointer_arrays_.emplace_back();
    for (size_t i = 0; i < count; ++i) {
      pointers.push_back(in_.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : make());
    }
    return reinterpret_cast<const T* const*>(pointers.data());
  }

  const SimprecKernel* kernel() {
    auto& k = kernels_.emplace_back();
    k.struct_size = struct_size(sizeof(SimprecKernel));
    k.name = text({"gemm", "attention", "exp2"});
    k.kind = in_.ConsumeIntegralInRange<uint32_t>(0, 5);
    k.flags = in_.ConsumeIntegral<uint32_t>();
    k.description = text({"a kernel"});
    k.emulation_model = text({"sequential", "cuda-fa2", "correctly-rounded", "tc:sm90-mma-bf16"});
    k.operands = array<SimprecOperandSpec>(k.operand_count, 10, [&] { return operand(); });
    k.dimensions = array<SimprecDimensionSpec>(k.dimension_count, 4, [&] { return dimension(); });
    k.parameters = array<SimprecParameterSpec>(k.parameter_count, 4, [&] { return parameter(); });
    k.attributes = array<SimprecNamedValue>(k.attribute_count, 4, [&] { return named_value(); });
    k.run = in_.ConsumeBool() ? nullptr : [](const SimprecRunArgs*) { return SIMPREC_OK; };
    return &k;
  }

  const void* operand() {
    auto& o = operands_.emplace_back();
    o.struct_size = struct_size(sizeof(SimprecOperandSpec));
    o.name =
        text({"A", "B", "C", "D", "Q", "K", "V", "O", "LSE", "dO", "dQ", "dK", "dV", "x", "y"});
    o.direction = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
    o.flags = in_.ConsumeIntegral<uint32_t>();
    o.formats = text({"fp32", "bf16,fp16", "e4m3fn, e5m2", "fp32,", "e11m52", "tf32"});
    o.shape = text({"M,K", "K,N", "M,N", "B,H,Sq,D", "N", "4,M", ""});
    return &o;
  }

  const void* dimension() {
    auto& d = dimensions_.emplace_back();
    d.struct_size = struct_size(sizeof(SimprecDimensionSpec));
    d.symbol = text({"M", "N", "K", "D"});
    d.min = in_.ConsumeIntegral<int64_t>();
    d.max = in_.ConsumeIntegral<int64_t>();
    d.multiple_of = in_.ConsumeIntegral<int64_t>();
    return &d;
  }

  const void* parameter() {
    auto& p = parameters_.emplace_back();
    p.struct_size = struct_size(sizeof(SimprecParameterSpec));
    p.name = text({"causal", "scale", "seed"});
    p.type = in_.ConsumeIntegralInRange<uint32_t>(0, 5);
    p.required = in_.ConsumeIntegral<uint32_t>();
    p.default_value = text({"false", "0.125"});
    p.description = text({"a parameter"});
    return &p;
  }

  const void* named_value() {
    auto& v = values_.emplace_back();
    v.struct_size = struct_size(sizeof(SimprecNamedValue));
    v.name = text({"accumulator_format", "format", "block_rows", "exp2_function"});
    v.type = in_.ConsumeIntegralInRange<uint32_t>(0, 5);
    // The union holds what the type says: a string value that is not a string would be a
    // pointer no host can check.
    if (v.type == SIMPREC_VALUE_STRING) {
      v.string_value = text({"fp32", "64"});
    } else {
      v.int64_value = in_.ConsumeIntegral<int64_t>();
    }
    return &v;
  }

  FuzzedDataProvider& in_;
  // Deques: pointers to their elements stay valid as they grow.
  std::deque<std::string> strings_;
  std::deque<std::vector<const void*>> pointer_arrays_;
  std::deque<SimprecPlugin> plugins_;
  std::deque<SimprecKernel> kernels_;
  std::deque<SimprecOperandSpec> operands_;
  std::deque<SimprecDimensionSpec> dimensions_;
  std::deque<SimprecParameterSpec> parameters_;
  std::deque<SimprecNamedValue> values_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  DescriptionBuilder builder(in);
  const SimprecPlugin* plugin = in.ConsumeIntegralInRange(0, 31) == 0 ? nullptr : builder.plugin();
  simprec::plugins::PluginInfo info;
  try {
    info = simprec::plugins::describe_plugin(plugin, "fuzzed.so");
  } catch (const simprec::plugins::PluginError&) {
    return 0;  // refused, with a message
  }
  // As the runner sends it to the host: dumped, parsed and read back.
  const std::string sent = simprec::plugins::to_json(info).dump();
  const auto received = simprec::plugins::plugin_info_from_json(nlohmann::json::parse(sent));
  if (simprec::plugins::to_json(received).dump() != sent) std::abort();
  return 0;
}
