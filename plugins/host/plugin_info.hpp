// What a plugin says about itself, as C++ values: a checked copy of the C descriptors of
// plugins/simprec_plugin.h that outlives the library (and can come from a runner process).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace simprec::plugins {

enum class KernelKind : uint32_t {
  kMatmul = 1,             // SIMPREC_KERNEL_MATMUL
  kAttentionForward = 2,   // SIMPREC_KERNEL_ATTENTION_FORWARD
  kAttentionBackward = 3,  // SIMPREC_KERNEL_ATTENTION_BACKWARD
  kFunction = 4,           // SIMPREC_KERNEL_FUNCTION
};
// "matmul", "attention-forward", "attention-backward", "function".
std::string kernel_kind_name(KernelKind kind);
std::optional<KernelKind> kernel_kind_from_code(uint32_t code);
std::optional<KernelKind> kernel_kind_from_name(std::string_view name);

enum class ValueType : uint32_t { kInt64 = 1, kFloat64 = 2, kString = 3, kBool = 4 };
std::string value_type_name(ValueType type);  // "int64", "float64", "string", "bool"
std::optional<ValueType> value_type_from_code(uint32_t code);
std::optional<ValueType> value_type_from_name(std::string_view name);

using Value = std::variant<int64_t, double, std::string, bool>;
ValueType type_of(const Value& value);
std::string value_text(const Value& value);  // 42, 0.125, text, true
// Parses text as a value of `type`; throws std::invalid_argument naming the text.
Value parse_value(ValueType type, std::string_view text);

struct NamedValue {
  std::string name;
  Value value;
};

struct OperandInfo {
  std::string name;
  bool is_output = false;
  bool optional = false;
  std::vector<std::string> formats;  // canonical simprec format names
  std::vector<std::string> shape;    // each a symbol or a decimal integer
};

struct DimensionInfo {
  std::string symbol;
  int64_t min = 1;
  int64_t max = 0;  // 0: no limit
  int64_t multiple_of = 1;
};

struct ParameterInfo {
  std::string name;
  ValueType type = ValueType::kInt64;
  bool required = false;
  std::string default_value;  // as text; empty: none
  std::string description;
};

struct KernelInfo {
  std::string name;
  KernelKind kind = KernelKind::kMatmul;
  bool bit_exact = false;
  std::string description;
  std::string emulation_model;  // empty: none claimed
  std::vector<OperandInfo> operands;
  std::vector<DimensionInfo> dimensions;
  std::vector<ParameterInfo> parameters;
  std::vector<NamedValue> attributes;

  const OperandInfo* operand(std::string_view name) const;
  const DimensionInfo* dimension(std::string_view symbol) const;
  const ParameterInfo* parameter(std::string_view name) const;
  const NamedValue* attribute(std::string_view name) const;
};

struct PluginInfo {
  std::string path;  // the shared library it came from
  std::string name;
  std::string version;
  std::string description;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<KernelInfo> kernels;

  // Throws PluginError listing the kernels when there is no kernel of that name.
  const KernelInfo& kernel(std::string_view name) const;
};

}  // namespace simprec::plugins
